// Sweeps as Slurm job arrays: <sweep>/slurm.sbatch runs `ndr sweep run-one DIR $SLURM_ARRAY_TASK_ID`,
// submitted with sbatch; the job ids go to <sweep>/slurm.json so that status and resubmit can ask squeue.
#pragma once

#include "common.h"
#include "core/io/sweep_plan.h"
#include "sweep_runner.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ndrcli {

inline constexpr const char* kSbatchFile = "slurm.sbatch";

// Throws CliError when sbatch is not on PATH.
void checkSbatch();
// Writes slurm.sbatch (once) and submits the entries `indices` (every entry when empty) as one job
// array; records the job id. Throws CliError when sbatch refuses.
int submitArray(const fs::path& dir, const ndr::SweepPlan& plan, const EngineOptions& e,
                const std::vector<int>& indices);
// The array tasks of this sweep's jobs that Slurm still holds (index -> state, e.g. PENDING, RUNNING);
// nullopt when squeue cannot be asked.
std::optional<std::map<int, std::string>> queuedTasks(const fs::path& dir);

} // namespace ndrcli
