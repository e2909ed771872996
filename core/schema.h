// core/schema.h: ATen function schemas with alias annotations (DESIGN §4).
//
// Parses the syntax of native_functions.yaml / torch.library definitions, e.g.
//   index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)
//   split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]
// and holds the built-in table (core/schemas.txt, compiled in). The alias analysis reads only
// what is here: which arguments are written, which results alias which arguments.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"
#include "core/name_index.h"

namespace wb {

// `(a)`, `(a!)`, `(a -> *)`, `(a|b)`: the sets before the arrow, after it, and the write flag.
struct AliasAnnotation {
  std::vector<std::string> beforeSets;  // {"a"}
  std::vector<std::string> afterSets;   // {"*"} for `a -> *`; empty when there is no arrow
  bool isWrite = false;
  friend bool operator==(const AliasAnnotation&, const AliasAnnotation&) = default;
};

// A schema type: a named base type, optionally wrapped in `?` and/or `[]` / `[N]`.
struct SchemaType {
  std::string base;                  // "Tensor", "int", "SymInt", "Scalar", "ScalarType", ...
  bool optional = false;             // `Tensor?` (element optional)
  bool isList = false;               // `Tensor[]`, `int[2]`, `Tensor?[]`
  std::optional<long> fixedSize;     // N of `int[N]`
  bool listOptional = false;         // `int[1]?`: the list itself may be None
  // The annotation on the element (`Tensor(a)[]` has it on the element). For a list written
  // through (`Tensor(a!)[]`) it is copied to `containerAlias` too, as PyTorch's parser does.
  std::optional<AliasAnnotation> alias;
  std::optional<AliasAnnotation> containerAlias;

  bool isTensor() const { return base == "Tensor"; }               // Tensor, Tensor?, Tensor[]...
  bool isSingleTensor() const { return isTensor() && !isList; }
  bool isTensorList() const { return isTensor() && isList; }
  bool isWrite() const;  // the element or the container is written
  friend bool operator==(const SchemaType&, const SchemaType&) = default;
};

struct SchemaArgument {
  std::string name;  // may be empty for returns
  SchemaType type;
  std::optional<std::string> defaultValue;  // verbatim
  bool kwargOnly = false;                   // after `*`
  friend bool operator==(const SchemaArgument&, const SchemaArgument&) = default;
};

struct Schema {
  std::string ns;        // "aten", "llama", "my_ops"
  std::string name;      // "add_", "split"
  std::string overload;  // "Tensor", "out"; empty for the default overload
  std::vector<SchemaArgument> arguments;
  std::vector<SchemaArgument> returns;

  // "aten::add.Tensor", or "aten::copy_" for the default overload: the normalised target.
  std::string qualifiedName() const;
  // torchgen's SchemaKind::inplace: the base name ends in `_` (not `__`), or an augmented
  // dunder such as `__iand__`.
  bool isInplaceKind() const;
  // Some argument is written (`(a!)`, including `Tensor(a!)[]`).
  bool isMutable() const;
  // Index of the argument with this name, or nullopt.
  std::optional<std::size_t> argumentIndex(std::string_view argName) const;
  friend bool operator==(const Schema&, const Schema&) = default;
};

// Parses one schema; `origin` names where the text came from for the diagnostic
// (line numbers are relative to `line`).
Result<Schema> parseSchema(std::string_view text, std::string_view origin = "<schema>", int line = 1);
// "name.overload(args) -> returns" as PyTorch prints it, readable by parseSchema.
std::string formatSchema(const Schema& schema);

// What the alias analysis needs of a schema, derived from its annotations once, when the
// schema enters a table: every analysis of every program would otherwise match alias sets
// (strings) again for each target it meets.
struct SchemaAliasFacts {
  struct Return {
    bool tensor = false;     // a Tensor return (single, optional or list)
    bool annotated = false;  // it carries an alias set: it aliases the arguments below
    bool matched = false;    // some argument declares that set
    std::vector<std::uint32_t> aliasedArguments;  // arguments whose alias sets it shares
  };
  std::vector<Return> returns;                  // per schema return
  std::vector<std::uint32_t> writtenArguments;  // arguments annotated `(a!)`, lists included
  bool inplaceKind = false;                     // Schema::isInplaceKind()
};
SchemaAliasFacts deriveAliasFacts(const Schema& schema);

// A set of schemas keyed by normalised target. A value type whose copies share their contents:
// check() and the fuzzers make a table per program (the built-in 524 schemas plus the program's
// own `Schemas:` lines), and a deep copy per program cost more than the check. Adding to a
// table whose contents are shared starts a new layer over them instead of copying them; a
// layer's schemas replace the same keys below it.
class SchemaTable {
 public:
  // Number of distinct keys.
  std::size_t size() const;
  // A schema with this exact key (qualifiedName()) is present.
  bool contains(std::string_view key) const;
  // Every schema, ordered by key.
  std::vector<const Schema*> all() const;

  // Finds the schema of a normalised target. "aten::view_copy" (an overload packet, as old
  // printouts write it) resolves to the default overload, or to the only overload there is,
  // or, when there are several, to the first whose positional arity fits `positionalArgs`
  // (if given).
  const Schema* find(std::string_view target, std::optional<std::size_t> positionalArgs = {}) const;
  // find() with the schema's derived alias facts; both null when there is no schema.
  struct Found {
    const Schema* schema = nullptr;
    const SchemaAliasFacts* aliasFacts = nullptr;
  };
  Found lookup(std::string_view target, std::optional<std::size_t> positionalArgs = {}) const;
  // lookup() with hashName(target) already computed: the alias analysis hashes each target
  // for its own index and would otherwise hash it again here.
  Found lookupHashed(std::string_view target, std::uint64_t targetHash,
                     std::optional<std::size_t> positionalArgs = {}) const;
  // Adds or replaces a schema.
  void add(Schema schema);
  // Parses and adds every non-blank, non-comment (`#`) line of `text`.
  std::vector<Diagnostic> addAll(std::string_view text, std::string_view origin);

 private:
  struct Entry {
    std::string_view key;  // the key in Layer::byName
    const Schema* schema = nullptr;
    SchemaAliasFacts facts;
  };
  struct EntryKey {
    const std::vector<Entry>* entries;
    std::string_view operator()(std::uint32_t id) const { return (*entries)[id].key; }
  };
  // Layers live behind shared pointers and never move, so an index may point into its own.
  struct Layer {
    std::map<std::string, Schema, std::less<>> byName;  // key: qualifiedName()
    // Exact key -> entry. A lookup in `byName` compares strings that share long prefixes
    // ("aten::...") at every level of the tree; the analyses look targets up constantly.
    std::vector<Entry> entries;
    FlatNameIndex<EntryKey> index{EntryKey{&entries}, 16};
    std::shared_ptr<const Layer> below;  // null for the bottom layer
    std::size_t depth = 1;
    Layer() = default;
    Layer(const Layer&) = delete;
    Layer& operator=(const Layer&) = delete;
  };
  // The top layer; shared by copies, changed in place only while this table alone holds it.
  std::shared_ptr<Layer> top_;
  const Entry* entry(std::string_view key) const { return entry(key, hashName(key)); }
  const Entry* entry(std::string_view key, std::uint64_t hash) const;
  void insert(Layer& layer, Schema schema, const SchemaAliasFacts* facts);
};

// The built-in table (core/schemas.txt): every schema of executorch-semantics §9 and more.
SchemaTable builtinSchemas();
// The text of core/schemas.txt, compiled in (generated by core/embed_schemas.cmake).
std::string_view builtinSchemaText();

}  // namespace wb
