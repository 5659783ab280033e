# Writes OUT: BuiltinTables() parsing each of TABLES (JSON files) once.
set(body "")
foreach(table ${TABLES})
  file(READ ${table} text)
  get_filename_component(name ${table} NAME)
  string(APPEND body "    {\"builtin:${name}\", R\"mgdtable(${text})mgdtable\"},\n")
endforeach()
file(WRITE ${OUT}.tmp "// Generated from tuning/tables/*.json by tuning/embed_tables.cmake.
#include <cstdio>
#include <cstdlib>

#include \"tuning/workgroups.h\"

namespace mgd::tuning {

const std::vector<Table>& BuiltinTables() {
  static const std::vector<Table> tables = [] {
    const std::pair<const char*, const char*> sources[] = {
${body}    };
    std::vector<Table> parsed;
    for (const auto& [name, text] : sources) {
      auto table = ParseTable(text, name);
      if (!table.ok()) {  // tests parse every table: this cannot ship
        std::fprintf(stderr, \"mgd: %s\\n\", std::string(table.status().message()).c_str());
        std::abort();
      }
      parsed.push_back(std::move(*table));
    }
    return parsed;
  }();
  return tables;
}

}  // namespace mgd::tuning
")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
