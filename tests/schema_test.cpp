// tests/schema_test.cpp: the schema parser, printer and built-in table (core/schema.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/schema.h"

namespace wb {
namespace {

// The non-blank, non-comment lines of the built-in table, with their line numbers.
std::vector<std::pair<int, std::string>> builtinLines() {
  std::vector<std::pair<int, std::string>> lines;
  std::string_view text = builtinSchemaText();
  int number = 0;
  while (!text.empty()) {
    ++number;
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty() || line[0] == '#') continue;
    lines.emplace_back(number, std::string(line));
  }
  return lines;
}

Schema parseOk(std::string_view text) {
  Result<Schema> r = parseSchema(text);
  EXPECT_TRUE(r.ok()) << text << "\n" << formatAll(r.errors);
  return r.ok() ? *r : Schema{};
}

AliasAnnotation alias(std::vector<std::string> before, bool write = false,
                      std::vector<std::string> after = {}) {
  return AliasAnnotation{std::move(before), std::move(after), write};
}

const Schema& lookup(const SchemaTable& table, std::string_view target) {
  const Schema* s = table.find(target);
  EXPECT_NE(s, nullptr) << target;
  static const Schema kEmpty;  // keeps a failed lookup from crashing the remaining checks
  return s ? *s : kEmpty;
}

// ---------------------------------------------------------------------------------------------
// The built-in table.

TEST(BuiltinSchemas, EveryLineParsesAndRoundTrips) {
  auto lines = builtinLines();
  EXPECT_GE(lines.size(), 250u);
  for (const auto& [number, line] : lines) {
    Result<Schema> r = parseSchema(line, "core/schemas.txt", number);
    ASSERT_TRUE(r.ok()) << formatAll(r.errors);
    std::string printed = formatSchema(*r);
    Result<Schema> again = parseSchema(printed);
    ASSERT_TRUE(again.ok()) << printed << "\n" << formatAll(again.errors);
    EXPECT_EQ(*again, *r) << "line " << number << ": " << line << "\n printed: " << printed;
    EXPECT_EQ(formatSchema(*again), printed);
  }
}

TEST(BuiltinSchemas, TableHasNoDuplicatesOrErrors) {
  SchemaTable table;
  EXPECT_TRUE(table.addAll(builtinSchemaText(), "core/schemas.txt").empty());
  EXPECT_EQ(table.size(), builtinLines().size()) << "a schema is listed twice";
  EXPECT_EQ(builtinSchemas().size(), table.size());
}

TEST(BuiltinSchemas, CoversTheRequiredOps) {
  SchemaTable table = builtinSchemas();
  for (std::string_view name :
       {"aten::add.Tensor", "aten::add_.Tensor", "aten::add.out", "aten::view_copy",
        "aten::slice_copy.Tensor", "aten::select_copy.int", "aten::split_with_sizes_copy",
        "aten::unbind_copy.int", "aten::narrow_copy", "aten::_unsafe_view", "aten::reshape",
        "aten::unfold", "aten::sum", "aten::sum.dim_IntList", "aten::mean.dim",
        "aten::arange.start_step", "aten::empty.memory_format", "aten::index_put",
        "aten::index_put_", "aten::index_copy_", "aten::index_add", "aten::index_add_",
        "aten::_native_batch_norm_legit_functional", "aten::_native_batch_norm_legit_no_training",
        "aten::native_layer_norm", "aten::conv2d", "aten::convolution", "aten::copy",
        "aten::hardtanh_", "aten::leaky_relu.out", "aten::relu.out", "aten::where.self_out",
        "aten::bitwise_and_.Tensor", "aten::_assert_async.msg", "aten::sym_size.int",
        "aten::sym_numel", "aten::_local_scalar_dense", "aten::_foreach_add_.List",
        "llama::update_cache", "llama::update_cache.out", "dim_order_ops::_to_dim_order_copy",
        "dim_order_ops::_clone_dim_order", "quantized_decomposed::quantize_per_tensor",
        "quantized_decomposed::dequantize_per_tensor"}) {
    EXPECT_TRUE(table.contains(name)) << name;
  }
}

// ---------------------------------------------------------------------------------------------
// Alias sets, write flags and list annotations of the entries the analysis depends on.

TEST(BuiltinSchemas, InplaceAdd) {
  SchemaTable table = builtinSchemas();
  const Schema& s = lookup(table, "aten::add_.Tensor");
  EXPECT_EQ(s.ns, "aten");
  EXPECT_EQ(s.name, "add_");
  EXPECT_EQ(s.overload, "Tensor");
  ASSERT_EQ(s.arguments.size(), 3u);
  EXPECT_EQ(s.arguments[0].type.alias, alias({"a"}, true));
  EXPECT_TRUE(s.arguments[0].type.isWrite());
  EXPECT_FALSE(s.arguments[1].type.alias);
  EXPECT_TRUE(s.arguments[2].kwargOnly);
  EXPECT_EQ(s.arguments[2].defaultValue, "1");
  ASSERT_EQ(s.returns.size(), 1u);
  EXPECT_EQ(s.returns[0].type.alias, alias({"a"}, true));
  EXPECT_TRUE(s.isInplaceKind());
  EXPECT_TRUE(s.isMutable());
}

TEST(BuiltinSchemas, SplitReturnsAliasingList) {
  SchemaTable table = builtinSchemas();
  const Schema& s = lookup(table, "aten::split.Tensor");
  ASSERT_EQ(s.arguments.size(), 3u);
  EXPECT_EQ(s.arguments[0].type.alias, alias({"a"}, false, {"*"}));
  EXPECT_FALSE(s.arguments[0].type.isWrite());
  EXPECT_EQ(s.arguments[1].type.base, "SymInt");
  ASSERT_EQ(s.returns.size(), 1u);
  EXPECT_TRUE(s.returns[0].type.isTensorList());
  EXPECT_EQ(s.returns[0].type.alias, alias({"a"}));
  EXPECT_FALSE(s.returns[0].type.containerAlias);  // not written: nothing copied up
  EXPECT_FALSE(s.isMutable());
  EXPECT_FALSE(s.isInplaceKind());
}

TEST(BuiltinSchemas, ForeachAddWritesEveryElement) {
  SchemaTable table = builtinSchemas();
  const Schema& s = lookup(table, "aten::_foreach_add_.Scalar");
  ASSERT_EQ(s.arguments.size(), 2u);
  const SchemaType& self = s.arguments[0].type;
  EXPECT_TRUE(self.isTensorList());
  EXPECT_EQ(self.alias, alias({"a"}, true));
  EXPECT_EQ(self.containerAlias, alias({"a"}, true));  // as schema_type_parser.cpp does
  EXPECT_TRUE(self.isWrite());
  EXPECT_TRUE(s.returns.empty());
  EXPECT_TRUE(s.isMutable());
  EXPECT_TRUE(s.isInplaceKind());
  EXPECT_EQ(formatSchema(s), "aten::_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()");
}

TEST(BuiltinSchemas, IndexPutFunctionalAndInplace) {
  SchemaTable table = builtinSchemas();
  const Schema& functional = lookup(table, "aten::index_put");
  ASSERT_EQ(functional.arguments.size(), 4u);
  const SchemaType& indices = functional.arguments[1].type;
  EXPECT_TRUE(indices.isTensorList());
  EXPECT_TRUE(indices.optional);  // Tensor?[]: optional elements, not an optional list
  EXPECT_FALSE(indices.listOptional);
  EXPECT_FALSE(functional.isMutable());
  EXPECT_FALSE(functional.returns[0].type.alias);

  const Schema& inplace = lookup(table, "aten::index_put_");
  EXPECT_TRUE(inplace.arguments[0].type.isWrite());
  EXPECT_FALSE(inplace.arguments[1].type.isWrite());
  EXPECT_FALSE(inplace.arguments[2].type.alias);  // values is read, not aliased (H11)
  EXPECT_EQ(inplace.arguments[3].defaultValue, "False");
  EXPECT_EQ(inplace.returns[0].type.alias, alias({"a"}, true));
  EXPECT_TRUE(inplace.isInplaceKind());
  EXPECT_EQ(inplace.argumentIndex("values"), 2u);
}

TEST(BuiltinSchemas, ExpandAsAliasesSelfOnly) {
  SchemaTable table = builtinSchemas();
  const Schema& s = lookup(table, "aten::expand_as");
  ASSERT_EQ(s.arguments.size(), 2u);
  EXPECT_EQ(s.arguments[0].type.alias, alias({"a"}));
  EXPECT_FALSE(s.arguments[1].type.alias);
  EXPECT_EQ(s.returns[0].type.alias, alias({"a"}));
  EXPECT_FALSE(s.isMutable());
}

TEST(BuiltinSchemas, BatchNormMutatesRunningStatsButIsNotInplace) {
  SchemaTable table = builtinSchemas();
  const Schema& s = lookup(table, "aten::_native_batch_norm_legit");
  ASSERT_EQ(s.arguments.size(), 8u);
  EXPECT_TRUE(s.arguments[1].type.optional);
  EXPECT_EQ(s.arguments[3].name, "running_mean");
  EXPECT_EQ(s.arguments[3].type.alias, alias({"a"}, true));
  EXPECT_EQ(s.arguments[4].type.alias, alias({"b"}, true));
  for (std::size_t i : {0u, 1u, 2u, 5u, 6u, 7u}) EXPECT_FALSE(s.arguments[i].type.isWrite()) << i;
  ASSERT_EQ(s.returns.size(), 3u);
  for (const SchemaArgument& r : s.returns) EXPECT_FALSE(r.type.alias);
  EXPECT_TRUE(s.isMutable());
  EXPECT_FALSE(s.isInplaceKind());

  const Schema& functional = lookup(table, "aten::_native_batch_norm_legit_functional");
  ASSERT_EQ(functional.returns.size(), 5u);
  EXPECT_EQ(functional.returns[3].name, "running_mean_out");
  EXPECT_FALSE(functional.isMutable());
}

TEST(BuiltinSchemas, CopyInplace) {
  SchemaTable table = builtinSchemas();
  const Schema& s = lookup(table, "aten::copy_");
  EXPECT_TRUE(s.overload.empty());
  EXPECT_EQ(s.qualifiedName(), "aten::copy_");
  ASSERT_EQ(s.arguments.size(), 3u);
  EXPECT_EQ(s.arguments[0].type.alias, alias({"a"}, true));
  EXPECT_FALSE(s.arguments[1].type.alias);
  EXPECT_EQ(s.arguments[2].type.base, "bool");
  EXPECT_EQ(s.returns[0].type.alias, alias({"a"}, true));
  EXPECT_TRUE(s.isInplaceKind());
}

TEST(BuiltinSchemas, LlamaUpdateCacheWritesArgumentOne) {
  SchemaTable table = builtinSchemas();
  const Schema& s = lookup(table, "llama::update_cache");
  EXPECT_EQ(s.ns, "llama");
  EXPECT_EQ(s.argumentIndex("cache"), 1u);
  EXPECT_FALSE(s.arguments[0].type.isWrite());
  EXPECT_EQ(s.arguments[1].type.alias, alias({"a"}, true));
  EXPECT_EQ(s.arguments[2].type.base, "SymInt");
  EXPECT_FALSE(s.returns[0].type.alias);  // a fresh result, although cache is written
  EXPECT_TRUE(s.isMutable());
  EXPECT_FALSE(s.isInplaceKind());

  const Schema& out = lookup(table, "llama::update_cache.out");
  EXPECT_TRUE(out.arguments[3].kwargOnly);
  EXPECT_EQ(out.arguments[3].type.alias, alias({"b"}, true));
  EXPECT_EQ(out.returns[0].type.alias, alias({"b"}, true));
}

TEST(BuiltinSchemas, AddOut) {
  SchemaTable table = builtinSchemas();
  const Schema& s = lookup(table, "aten::add.out");
  ASSERT_EQ(s.arguments.size(), 4u);
  EXPECT_FALSE(s.arguments[1].kwargOnly);
  EXPECT_TRUE(s.arguments[2].kwargOnly);
  EXPECT_TRUE(s.arguments[3].kwargOnly);
  EXPECT_EQ(s.arguments[3].name, "out");
  EXPECT_EQ(s.arguments[3].type.alias, alias({"a"}, true));
  EXPECT_FALSE(s.arguments[0].type.isWrite());
  EXPECT_EQ(s.returns[0].type.alias, alias({"a"}, true));
  EXPECT_TRUE(s.isMutable());
  EXPECT_FALSE(s.isInplaceKind());
}

TEST(BuiltinSchemas, OutListIsWritten) {
  SchemaTable table = builtinSchemas();
  const Schema& s = lookup(table, "aten::split_with_sizes_copy.out");
  const SchemaType& out = s.arguments[3].type;
  EXPECT_TRUE(out.isTensorList());
  EXPECT_TRUE(out.isWrite());
  EXPECT_EQ(out.containerAlias, alias({"a"}, true));
}

// ---------------------------------------------------------------------------------------------
// isInplaceKind (torchgen's SchemaKind::inplace).

TEST(Schema, IsInplaceKind) {
  auto inplace = [](std::string_view name) {
    Schema s;
    s.ns = "aten";
    s.name = std::string(name);
    return s.isInplaceKind();
  };
  EXPECT_TRUE(inplace("add_"));
  EXPECT_TRUE(inplace("index_put_"));
  EXPECT_TRUE(inplace("_foreach_add_"));
  EXPECT_TRUE(inplace("_index_put_impl_"));
  EXPECT_TRUE(inplace("__iand__"));
  EXPECT_TRUE(inplace("__iadd__"));
  EXPECT_TRUE(inplace("__ilshift__"));
  EXPECT_FALSE(inplace("add"));
  EXPECT_FALSE(inplace("__and__"));
  EXPECT_FALSE(inplace("__lshift__"));
  EXPECT_FALSE(inplace("__ifoo__"));       // not an augmented assignment
  EXPECT_FALSE(inplace("_unsafe_view"));
  EXPECT_FALSE(inplace("update_cache"));
  EXPECT_FALSE(inplace("_native_batch_norm_legit"));
}

// ---------------------------------------------------------------------------------------------
// SchemaTable::find.

TEST(SchemaTable, FindPacketResolvesToDefaultOverload) {
  SchemaTable table = builtinSchemas();
  const Schema* viewCopy = table.find("aten::view_copy");
  ASSERT_NE(viewCopy, nullptr);
  EXPECT_EQ(viewCopy->qualifiedName(), "aten::view_copy");
  EXPECT_EQ(table.find("aten::view_copy.default"), viewCopy);  // torch.library's spelling
  EXPECT_EQ(table.find("aten::view_copy", 2), viewCopy);
  const Schema* copy = table.find("aten::copy_");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->qualifiedName(), "aten::copy_");
  EXPECT_EQ(table.find("aten::copy_.default"), copy);
}

TEST(SchemaTable, FindPacketWithoutDefaultResolvesByArity) {
  SchemaTable table = builtinSchemas();
  // add.Tensor, add.Scalar and add.out fit two positional arguments; the one that writes
  // nothing and is ATen's primary overload wins.
  const Schema* two = table.find("aten::add", 2);
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->qualifiedName(), "aten::add.Tensor");
  const Schema* three = table.find("aten::add", 3);  // only add.Scalar takes alpha positionally
  ASSERT_NE(three, nullptr);
  EXPECT_EQ(three->qualifiedName(), "aten::add.Scalar");
  EXPECT_EQ(table.find("aten::add", 7), nullptr);
  EXPECT_EQ(table.find("aten::add"), nullptr);  // ambiguous without an arity
  const Schema* inplace = table.find("aten::add_", 2);
  ASSERT_NE(inplace, nullptr);
  EXPECT_EQ(inplace->qualifiedName(), "aten::add_.Tensor");
  // A packet with a single overload resolves to it whatever the arity.
  const Schema* sdpa = table.find("llama::sdpa_with_kv_cache", 99);
  ASSERT_NE(sdpa, nullptr);
  EXPECT_EQ(sdpa->qualifiedName(), "llama::sdpa_with_kv_cache");
  const Schema* symSize = table.find("aten::sym_size");
  ASSERT_NE(symSize, nullptr);
  EXPECT_EQ(symSize->qualifiedName(), "aten::sym_size.int");
  // The default overload wins whenever there is one, as for "aten::_assert_async".
  const Schema* assertAsync = table.find("aten::_assert_async", 2);
  ASSERT_NE(assertAsync, nullptr);
  EXPECT_EQ(assertAsync->qualifiedName(), "aten::_assert_async");
}

TEST(SchemaTable, FindUnknownAndExact) {
  SchemaTable table = builtinSchemas();
  EXPECT_EQ(table.find("my_ops::mystery"), nullptr);
  EXPECT_EQ(table.find("aten::ad", 2), nullptr);  // a prefix of a name is not a packet
  EXPECT_EQ(table.find(""), nullptr);
  const Schema* exact = table.find("aten::add.Scalar", 2);
  ASSERT_NE(exact, nullptr);
  EXPECT_EQ(exact->overload, "Scalar");
}

TEST(SchemaTable, AddReplacesAndAddAllReportsLines) {
  SchemaTable table;
  table.add(parseOk("my_ops::mystery(Tensor x) -> Tensor"));
  table.add(parseOk("my_ops::mystery(Tensor(a!) x) -> Tensor(a!)"));
  ASSERT_EQ(table.size(), 1u);
  EXPECT_TRUE(table.find("my_ops::mystery.default")->isMutable());

  auto errors = table.addAll("# comment\n\nmy_ops::a(Tensor x) -> Tensor\r\n  my_ops::b(Tensor x -> Tensor\n",
                             "extra.txt");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].file, "extra.txt");
  EXPECT_EQ(errors[0].line, 4);
  EXPECT_NE(table.find("my_ops::a"), nullptr);
  EXPECT_EQ(table.find("my_ops::b"), nullptr);
}

// ---------------------------------------------------------------------------------------------
// The full syntax.

TEST(SchemaParser, FullSyntaxRoundTrips) {
  for (std::string_view text : {
           "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
           "aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)",
           "aten::foo(Tensor(a|b) x, Tensor(a! -> a|b) y, Tensor(*) z) -> Tensor(a|b)",
           "aten::f(int[2] a=[0,1], int[1]? b=None, float c=1e-05, float d=-0.1, str e='none', str f=\"none\", "
           "MemoryFormat g=contiguous_format, ScalarType h=long, int[] i=[], bool j=True) -> ()",
           "aten::g(Tensor?[] a, Tensor(a!)?[] b, Dimname d, Storage s, Any x, Layout? l, Device? v, "
           "Generator? r, bool? o, str? p, ScalarType? q) -> (Tensor, Tensor)",
           "aten::h(__torch__.torch.classes.quantized.LinearPackedParamsBase packed, Dict(str,Tensor) m) -> "
           "(Tensor values, Tensor indices)",
           "aten::i(SymInt[] s, Scalar[] t) -> SymInt[]",
           "aten::j(Tensor self) -> Tensor(a)[]",
           "aten::k(Tensor self) -> Tensor out",
           "aten::l(*, Tensor(a!) out) -> Tensor(a!)",
           "aten::m() -> ()",
           "aten::n(int reduction=at::Reduction::Mean, float eps=-inf) -> Tensor?",
       }) {
    Schema s = parseOk(text);
    EXPECT_EQ(formatSchema(s), text);
    EXPECT_EQ(parseOk(formatSchema(s)), s);
  }
}

TEST(SchemaParser, TypeDetails) {
  Schema s = parseOk(
      "f(int[2] a, int[1]? b, Tensor(a!)?[] c, t[](a!) d, __torch__.torch.classes.x.Y e, Dict( str , Tensor ) g)"
      " -> (Tensor a, Tensor b)");
  EXPECT_EQ(s.ns, "aten");
  EXPECT_EQ(s.overload, "");
  EXPECT_EQ(s.arguments[0].type.fixedSize, 2);
  EXPECT_TRUE(s.arguments[0].type.isList);
  EXPECT_FALSE(s.arguments[0].type.listOptional);
  EXPECT_TRUE(s.arguments[1].type.listOptional);
  EXPECT_FALSE(s.arguments[1].type.optional);
  EXPECT_TRUE(s.arguments[2].type.optional);
  EXPECT_TRUE(s.arguments[2].type.isTensorList());
  EXPECT_EQ(s.arguments[2].type.containerAlias, alias({"a"}, true));
  EXPECT_FALSE(s.arguments[3].type.alias);  // the annotation is on the container only
  EXPECT_EQ(s.arguments[3].type.containerAlias, alias({"a"}, true));
  EXPECT_TRUE(s.arguments[3].type.isWrite());
  EXPECT_EQ(s.arguments[4].type.base, "__torch__.torch.classes.x.Y");
  EXPECT_EQ(s.arguments[5].type.base, "Dict(str,Tensor)");
  EXPECT_EQ(s.returns[0].name, "a");
  EXPECT_EQ(s.returns[1].name, "b");
  EXPECT_EQ(parseOk("aten::x.default(Tensor a) -> Tensor").qualifiedName(), "aten::x");
  EXPECT_EQ(parseOk("  f ( Tensor ( a ! ) self ,  * , int x = 1 )  ->  ( Tensor ( a ! ) )  ").returns.size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Malformed schemas: never a crash, always the column and what was expected.

struct Malformed {
  std::string text;
  int column;
  std::string message;
};

TEST(SchemaParser, MalformedSchemasReportColumnAndExpectation) {
  const std::vector<Malformed> cases = {
      {"", 1, "expected an operator name, found end of schema"},
      {"(Tensor x) -> Tensor", 1, "expected an operator name, found '('"},
      {"aten::(Tensor self) -> Tensor", 7, "expected an operator name after '::', found '('"},
      {"add.(Tensor self) -> Tensor", 5, "expected an overload name after '.', found '('"},
      {"add Tensor self) -> Tensor", 5, "expected '(' to open the argument list, found 'Tensor'"},
      {"add(Tensor self", 16, "expected ',' or ')' after an argument, found end of schema"},
      {"add(Tensor self) Tensor", 18, "expected '->' before the returns, found 'Tensor'"},
      {"add(Tensor self) ->", 20, "expected a type, found end of schema"},
      {"add(Tensor(a self) -> Tensor", 14, "expected ')' to close the alias annotation, found 'self'"},
      {"add(Tensor() self) -> Tensor", 12, "expected an alias set name or '*', found ')'"},
      {"add(Tensor(a -> ) self) -> Tensor", 17, "expected an alias set name or '*', found ')'"},
      {"add(Tensor self, Tensor self) -> Tensor", 25, "duplicate argument name 'self'"},
      {"add(Tensor self, *, *, Tensor x) -> Tensor", 21, "'*' appears twice"},
      {"add(Tensor self, *) -> Tensor", 19, "expected a keyword-only argument after '*', found ')'"},
      {"add(int[][] x) -> Tensor", 10, "nested list types are not supported"},
      {"add(int[x] y) -> Tensor", 9, "expected ']' to close the list type, found 'x'"},
      {"add(Tensor?? self) -> Tensor", 12, "'?' may follow a type only once"},
      {"add(Tensor) -> Tensor", 11, "expected an argument name, found ')'"},
      {"add(Tensor self,) -> Tensor", 17, "expected a type, found ')'"},
      {"add(Tensor self=) -> Tensor", 17, "expected a default value, found ')'"},
      {"add(str s='abc) -> Tensor", 11, "unterminated string in default value (missing ')"},
      {"add(int[] x=[1, 2) -> Tensor", 18, "expected a value or ']' in the default value, found ')'"},
      {"add(int[] x=[1, 2", 18, "expected ']' to close the default value, found end of schema"},
      {"add(int x=1 2) -> Tensor", 13, "expected ',' or ')' after an argument, found '2'"},
      {"add(Tensor self, ...) -> Tensor", 18, "varargs '...' are not supported"},
      {"add(Tensor self) -> Tensor x=1", 29, "returns have no default values"},
      {"add(Tensor self) -> (Tensor, Tensor", 36, "expected ',' or ')' after a return, found end of schema"},
      {"add(Tensor self) -> ((Tensor))", 22, "tuple types are not supported"},
      {"add(Tensor self) -> Tensor )", 28, "expected the end of the schema, found ')'"},
      {"add(Tensor\x01 self) -> Tensor", 11, "expected an argument name, found byte 0x01"},
      {"add(Dict[str] x) -> Tensor", 9, "expected '(' after Dict, found '['"},
  };
  for (const Malformed& c : cases) {
    Result<Schema> r = parseSchema(c.text, "test.txt", 7);
    ASSERT_FALSE(r.ok()) << c.text;
    ASSERT_EQ(r.errors.size(), 1u);
    const Diagnostic& d = r.errors[0];
    EXPECT_EQ(d.message, c.message) << c.text;
    EXPECT_EQ(d.column, c.column) << c.text << ": " << d.message;
    EXPECT_EQ(d.file, "test.txt");
    EXPECT_EQ(d.line, 7);
    EXPECT_EQ(d.lineText, c.text);
  }
}

TEST(SchemaParser, HostileInputIsBounded) {
  // Deep nesting in a default and in a compound type: refused with a depth counter, no recursion.
  std::string deepDefault = "f(int[] x=" + std::string(1000, '[') + ") -> ()";
  Result<Schema> r = parseSchema(deepDefault);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].message, "default value is nested too deeply");
  std::string deepType = "f(Dict" + std::string(1000, '(') + " x) -> ()";
  r = parseSchema(deepType);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].message, "type is nested too deeply");
  // Overlong text is refused up front.
  std::string huge = "f(" + std::string(20000, ' ') + ") -> ()";
  r = parseSchema(huge);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].column, 1);
}

TEST(SchemaParser, EveryPrefixOfTheTableFailsCleanlyOrParses) {
  // Truncations of real schemas exercise every error path; each must give a diagnostic whose
  // column lies inside the text (or just past it), and never crash.
  for (const auto& [number, line] : builtinLines()) {
    for (std::size_t n = 0; n < line.size(); ++n) {
      std::string_view prefix = std::string_view(line).substr(0, n);
      Result<Schema> r = parseSchema(prefix);
      if (r.ok()) continue;  // e.g. a prefix that ends in a valid named return
      ASSERT_EQ(r.errors.size(), 1u);
      EXPECT_GE(r.errors[0].column, 1);
      EXPECT_LE(r.errors[0].column, static_cast<int>(n) + 1) << prefix;
      EXPECT_FALSE(r.errors[0].message.empty());
    }
  }
}

// Copies share their contents; adding to one starts a layer of its own (core/schema.h).
TEST(SchemaTable, CopiesAreIndependentValues) {
  const SchemaTable base = builtinSchemas();
  SchemaTable extended = base;
  ASSERT_FALSE(extended.contains("my_ops::mystery"));
  ASSERT_EQ(extended.addAll("my_ops::mystery(Tensor(a!) x) -> Tensor(a!)", "test").size(), 0u);
  EXPECT_TRUE(extended.contains("my_ops::mystery"));
  EXPECT_FALSE(base.contains("my_ops::mystery"));
  EXPECT_EQ(extended.size(), base.size() + 1);
  EXPECT_EQ(extended.find("aten::add.Tensor"), base.find("aten::add.Tensor"));  // shared, not copied
}

TEST(SchemaTable, UpperLayerReplacesTheSameKey) {
  const SchemaTable base = builtinSchemas();
  SchemaTable over = base;
  over.addAll("aten::relu(Tensor(a!) self) -> Tensor(a!)", "test");
  const Schema* mine = over.find("aten::relu");
  ASSERT_NE(mine, nullptr);
  EXPECT_TRUE(mine->isMutable());
  EXPECT_FALSE(base.find("aten::relu")->isMutable());
  EXPECT_EQ(over.size(), base.size());
  const SchemaTable::Found found = over.lookup("aten::relu");
  ASSERT_NE(found.aliasFacts, nullptr);
  EXPECT_EQ(found.aliasFacts->writtenArguments, std::vector<std::uint32_t>{0});
}

TEST(SchemaTable, PacketResolvesAcrossLayers) {
  SchemaTable base;
  base.addAll("my::op.one(Tensor x) -> Tensor", "test");
  SchemaTable over = base;
  EXPECT_EQ(over.find("my::op"), base.find("my::op.one"));  // the only overload
  over.addAll("my::op.two(Tensor x, Tensor y) -> Tensor", "test");
  EXPECT_EQ(over.find("my::op", 1), over.find("my::op.one"));
  EXPECT_EQ(over.find("my::op", 2), over.find("my::op.two"));
  EXPECT_EQ(base.find("my::op", 2), base.find("my::op.one"));  // still its only overload
}

TEST(SchemaTable, DeepChainsOfCopiesStayCorrect) {
  SchemaTable table = builtinSchemas();
  std::vector<SchemaTable> keep;  // every copy stays alive, so each add starts a new layer
  for (int i = 0; i < 12; ++i) {
    keep.push_back(table);
    table.addAll("my::op" + std::to_string(i) + "(Tensor(a!) x) -> Tensor(a!)", "test");
  }
  for (int i = 0; i < 12; ++i) {
    EXPECT_TRUE(table.contains("my::op" + std::to_string(i)));
    EXPECT_FALSE(keep[static_cast<std::size_t>(i)].contains("my::op" + std::to_string(i)));
  }
  EXPECT_EQ(table.size(), builtinSchemas().size() + 12);
  EXPECT_NE(table.lookup("my::op3").aliasFacts, nullptr);
}

TEST(SchemaAliasFacts, DerivedFromAnnotations) {
  Result<Schema> s = parseSchema("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]");
  ASSERT_TRUE(s);
  const SchemaAliasFacts f = deriveAliasFacts(*s);
  ASSERT_EQ(f.returns.size(), 1u);
  EXPECT_TRUE(f.returns[0].annotated);
  EXPECT_EQ(f.returns[0].aliasedArguments, std::vector<std::uint32_t>{0});
  EXPECT_TRUE(f.writtenArguments.empty());
  Result<Schema> e = parseSchema("expand_as(Tensor(a) self, Tensor other) -> Tensor(a)");
  ASSERT_TRUE(e);
  EXPECT_EQ(deriveAliasFacts(*e).returns[0].aliasedArguments, std::vector<std::uint32_t>{0});
}

}  // namespace
}  // namespace wb
