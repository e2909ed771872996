# Turns core/schemas.txt into a C++ source defining wb::builtinSchemaText().
file(READ ${IN} WBCHECK_SCHEMA_TEXT)
file(WRITE ${OUT} "// Generated from core/schemas.txt by core/embed_schemas.cmake. Do not edit.\n#include <string_view>\nnamespace wb {\nstd::string_view builtinSchemaText() {\n  return R\"WBSCHEMAS(${WBCHECK_SCHEMA_TEXT})WBSCHEMAS\";\n}\n}  // namespace wb\n")
