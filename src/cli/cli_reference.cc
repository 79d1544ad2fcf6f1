// Walks the CLI11 app after every command family registered itself. See
// cli_reference.h for what the result is for.
#include "cli/cli_reference.h"

#include <string>

namespace strata::cli {
namespace {

nlohmann::ordered_json OptionEntry(const CLI::Option& opt) {
  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  for (const std::string& s : opt.get_snames()) names.push_back("-" + s);
  for (const std::string& l : opt.get_lnames()) names.push_back("--" + l);
  nlohmann::ordered_json j;
  j["names"] = names;
  j["description"] = opt.get_description();
  // CLI11 makes a flag (--help and --version too) expect no value.
  j["takes_value"] = opt.get_expected_max() > 0;
  j["required"] = opt.get_required();
  j["type"] = opt.get_type_name();
  return j;
}

nlohmann::ordered_json PositionalEntry(const CLI::Option& opt) {
  nlohmann::ordered_json j;
  j["name"] = opt.get_name(true);
  j["description"] = opt.get_description();
  j["required"] = opt.get_required();
  j["repeats"] = opt.get_items_expected_max() > 1;
  return j;
}

}  // namespace

nlohmann::ordered_json CliReference(const CLI::App& app) {
  nlohmann::ordered_json j;
  j["name"] = app.get_name();
  j["description"] = app.get_description();
  nlohmann::ordered_json options = nlohmann::ordered_json::array();
  nlohmann::ordered_json positionals = nlohmann::ordered_json::array();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->nonpositional()) {
      options.push_back(OptionEntry(*opt));
    } else if (opt->get_positional()) {
      positionals.push_back(PositionalEntry(*opt));
    }
  }
  j["options"] = options;
  j["positionals"] = positionals;
  nlohmann::ordered_json commands = nlohmann::ordered_json::array();
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(CliReference(*sub));
  }
  j["commands"] = commands;
  return j;
}

}  // namespace strata::cli
