// Entry point of `ndr`, the command-line tool: parses the command line, runs one subcommand, and turns
// every error into one line on stderr and a non-zero exit status.
#include "commands.h"
#include "common.h"
#include "core/nn/allocator.h"
#include "core/nn/isa.h"

#include <iostream>
#include <new>

namespace {

// "train, eval, predict, sweep, bench and export": the commands this build has.
std::string commandList(const std::vector<ndrcli::Command>& commands) {
    std::string list;
    for (size_t i = 0; i < commands.size(); ++i) {
        if (i > 0)
            list += i + 1 == commands.size() ? " and " : ", ";
        list += commands[i].app->get_name();
    }
    return list;
}

} // namespace

int main(int argc, char** argv) {
    using namespace ndrcli;
    // NDR_ISA: the engine's level (docs/design.md §8). A level the program cannot run is an error:
    // `ndr bench` figures must not silently come from another level.
    if (const std::string problem = ndr::applyLevelRequest(argv); !problem.empty()) {
        std::cerr << "ndr: " << problem << std::endl;
        return kExitUsage;
    }
    ndr::keepFreedMemoryForReuse();
    CLI::App app{"NDR Studio: train and inspect Neural Data Routers and Transformers on compositional table "
                 "lookup, arithmetic and ListOps, without a window.",
                 "ndr"};
    app.require_subcommand(1);
    app.footer("Run `ndr COMMAND --help` for a command's options.\n");
    std::vector<Command> commands = {addTrainCommand(app), addEvalCommand(app),   addPredictCommand(app),
                                     addSweepCommand(app), addTable1Command(app), addBenchCommand(app)};
#ifdef NDR_WITH_EXPORT
    commands.push_back(addExportCommand(app));
#endif
    commands.push_back(addExportWeightsCommand(app));
    commands.push_back(addImportWeightsCommand(app));
    if (argc <= 1) {
        std::cerr << app.help();
        return kExitUsage;
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0)
            return app.exit(e); // --help
        const auto subs = app.get_subcommands();
        if (subs.empty() && argv[1][0] != '-') {
            std::cerr << "ndr: unknown command '" << argv[1] << "'; the commands are "
                      << commandList(commands) << " (see `ndr --help`)" << std::endl;
            return kExitUsage;
        }
        const std::string name = subs.empty() ? "ndr" : "ndr " + subs.front()->get_name();
        std::cerr << name << ": " << e.what() << " (see `" << name << " --help`)" << std::endl;
        return kExitUsage;
    }

    for (const auto& c : commands) {
        if (!c.app->parsed())
            continue;
        const std::string name = "ndr " + c.app->get_name();
        try {
            return c.run();
        } catch (const CliError& e) {
            std::cerr << name << ": " << e.what() << std::endl;
            return e.code;
        } catch (const std::bad_alloc&) {
            std::cerr << name << ": out of memory; try a smaller model or batch" << std::endl;
            return kExitError;
        } catch (const std::exception& e) {
            std::cerr << name << ": " << e.what() << std::endl;
            return kExitError;
        }
    }
    return kExitUsage; // require_subcommand makes this unreachable
}
