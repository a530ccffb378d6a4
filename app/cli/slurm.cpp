// Sweeps as Slurm job arrays (see slurm.h).
#include "slurm.h"

#include "process.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <sstream>

namespace ndrcli {

namespace {

constexpr const char* kJobsFile = "slurm.json";

std::string sbatchScript(const fs::path& dir, size_t runs, const EngineOptions& e) {
    const fs::path abs = fs::absolute(dir);
    std::ostringstream s;
    s << "#!/bin/bash\n"
      << "# Written by `ndr sweep --engine slurm`: one array task per entry of " << ndr::SweepPlan::kFileName
      << ".\n"
      << "#SBATCH --job-name=ndr-sweep\n"
      << "#SBATCH --array=0-" << runs - 1 << (e.maxParallel > 0 ? "%" + std::to_string(e.maxParallel) : "")
      << "\n"
      << "#SBATCH --cpus-per-task=" << e.cpusPerTask << "\n"
      << "#SBATCH --output=" << (abs / "logs" / "%a.log").string() << "\n"
      << "#SBATCH --open-mode=append\n";
    if (!e.time.empty())
        s << "#SBATCH --time=" << e.time << "\n";
    if (!e.mem.empty())
        s << "#SBATCH --mem=" << e.mem << "\n";
    if (!e.partition.empty())
        s << "#SBATCH --partition=" << e.partition << "\n";
    for (const auto& x : e.extra)
        s << "#SBATCH " << x << "\n";
    s << "exec " << quoteShell(selfExe()) << " sweep run-one --quiet " << quoteShell(abs.string())
      << " \"$SLURM_ARRAY_TASK_ID\"\n";
    return s.str();
}

// Job ids submitted for this sweep, oldest first.
std::vector<std::string> submittedJobs(const fs::path& dir) {
    std::vector<std::string> jobs;
    std::error_code ec;
    if (!fs::exists(dir / kJobsFile, ec))
        return jobs;
    try {
        const auto j = nlohmann::json::parse(ndr::readFileBounded(dir / kJobsFile, 1u << 20));
        for (const auto& x : j.at("jobs"))
            jobs.push_back(x.at("id").get<std::string>());
    } catch (const std::exception& e) {
        throw CliError((dir / kJobsFile).string() + ": " + e.what());
    }
    return jobs;
}

void recordJob(const fs::path& dir, const std::string& id, const std::vector<int>& indices) {
    nlohmann::json j = {{"jobs", nlohmann::json::array()}};
    std::error_code ec;
    if (fs::exists(dir / kJobsFile, ec))
        j = nlohmann::json::parse(ndr::readFileBounded(dir / kJobsFile, 1u << 20));
    j["jobs"].push_back({{"id", id}, {"indices", indices}});
    ndr::writeFileAtomic(dir / kJobsFile, j.dump(1) + "\n");
}

} // namespace

void checkSbatch() {
    if (findOnPath("sbatch").empty())
        throw CliError("sbatch is not on PATH: --engine slurm needs Slurm's client commands on this machine "
                       "(Debian: slurm-client), run from a login node of the cluster");
}

// The array tasks of this sweep's jobs that Slurm still holds (index -> state, e.g. PENDING, RUNNING);
// nullopt when squeue cannot be asked.
std::optional<std::map<int, std::string>> queuedTasks(const fs::path& dir) {
    const auto jobs = submittedJobs(dir);
    std::map<int, std::string> tasks;
    if (jobs.empty())
        return tasks;
    if (findOnPath("squeue").empty())
        return std::nullopt;
    std::string ids;
    for (const auto& j : jobs)
        ids += (ids.empty() ? "" : ",") + j;
    const auto out = capture({"squeue", "-h", "-r", "-j", ids, "-o", "%i %T"});
    if (!out)
        return std::nullopt;
    std::istringstream lines(*out);
    for (std::string id, state; lines >> id >> state;) {
        const auto cut = id.find('_');
        if (cut == std::string::npos)
            continue;
        try {
            tasks[std::stoi(id.substr(cut + 1))] = state;
        } catch (const std::exception&) {
        }
    }
    return tasks;
}

int submitArray(const fs::path& dir, const ndr::SweepPlan& plan, const EngineOptions& e,
                const std::vector<int>& indices) {
    checkSbatch();
    std::error_code ec;
    if (!fs::exists(dir / kSbatchFile, ec)) {
        fs::create_directories(dir / "logs", ec);
        ndr::writeFileAtomic(dir / kSbatchFile, sbatchScript(dir, plan.runs.size(), e));
    }
    std::vector<std::string> argv = {"sbatch", "--parsable"};
    if (!indices.empty()) {
        std::string list;
        for (int i : indices)
            list += (list.empty() ? "" : ",") + std::to_string(i);
        argv.push_back("--array=" + list + (e.maxParallel > 0 ? "%" + std::to_string(e.maxParallel) : ""));
    }
    argv.push_back((dir / kSbatchFile).string());
    std::string error;
    const auto out = capture(argv, &error);
    if (!out)
        throw CliError("sbatch refused the job array: " +
                       (error.empty() ? std::string("no message") : error));
    const std::string id = out->substr(0, out->find_first_of(";\n"));
    std::vector<int> all = indices;
    if (all.empty())
        for (size_t i = 0; i < plan.runs.size(); ++i)
            all.push_back(int(i));
    recordJob(dir, id, all);
    std::cout << "Submitted job array " << id << " (" << all.size() << (all.size() == 1 ? " run" : " runs")
              << "); see `ndr sweep status " << dir.string() << "`" << std::endl;
    return 0;
}

} // namespace ndrcli
