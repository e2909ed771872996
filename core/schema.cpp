// core/schema.cpp: the ATen function-schema parser, its printer, and the schema table
// (DESIGN §4). The grammar is that of native_functions.yaml / torch.library, as read by
// PyTorch's schema_type_parser.cpp and function_schema_parser.cpp. The parser is a single
// left-to-right scan without recursion (nested brackets in types and defaults are matched with a
// depth counter), so no input can exhaust the stack.
#include "core/schema.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <set>
#include <stdexcept>

namespace wb {

namespace {

// A schema longer than this is not an ATen schema; refusing it bounds the work per line.
constexpr std::size_t kMaxSchemaLength = 16 * 1024;
// Nesting of brackets inside a compound type (`Dict(str, Tensor[])`) or a default (`[[0]]`).
constexpr int kMaxNesting = 32;

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Type constructors whose parenthesised part is type parameters, not an alias annotation.
bool isCompoundTypeName(std::string_view name) {
  return name == "Dict" || name == "Tuple" || name == "Union" || name == "Future" ||
         name == "Await" || name == "RRef";
}

class SchemaParser {
 public:
  SchemaParser(std::string_view text, std::string_view origin, int line)
      : text_(text), origin_(origin), line_(line) {}

  Result<Schema> parse() {
    if (text_.size() > kMaxSchemaLength)
      return fail(0, "schema is longer than " + std::to_string(kMaxSchemaLength) + " characters");
    Schema schema;
    skipSpace();
    if (!parseName(schema)) return failure();
    skipSpace();
    if (!expect('(', "'(' to open the argument list")) return failure();
    if (!parseArguments(schema.arguments)) return failure();
    skipSpace();
    if (!expectArrow()) return failure();
    skipSpace();
    if (!parseReturns(schema.returns)) return failure();
    skipSpace();
    if (pos_ != text_.size()) return fail(pos_, "expected the end of the schema");
    return Result<Schema>::success(std::move(schema));
  }

 private:
  std::string_view text_;
  std::string_view origin_;
  int line_;
  std::size_t pos_ = 0;
  std::optional<Diagnostic> error_;

  // --- errors -----------------------------------------------------------------------------

  std::string describeHere(std::size_t at) const {
    if (at >= text_.size()) return "end of schema";
    std::string_view rest = text_.substr(at);
    if (isIdentChar(rest[0])) {
      std::size_t n = 0;
      while (n < rest.size() && n < 24 && isIdentChar(rest[n])) ++n;
      return "'" + std::string(rest.substr(0, n)) + "'";
    }
    unsigned char c = static_cast<unsigned char>(rest[0]);
    if (c < 0x20 || c >= 0x7f) return "byte 0x" + std::string(1, "0123456789abcdef"[c >> 4]) +
                                      std::string(1, "0123456789abcdef"[c & 15]);
    return "'" + std::string(1, rest[0]) + "'";
  }

  // Records the first error: "expected X, found Y" at byte offset `at`.
  bool error(std::size_t at, std::string message) {
    if (!error_) {
      Diagnostic d;
      d.file = std::string(origin_);
      d.line = line_;
      d.column = static_cast<int>(std::min(at, text_.size())) + 1;
      if (message.rfind("expected ", 0) == 0) message += ", found " + describeHere(at);
      d.message = std::move(message);
      d.lineText = std::string(text_.substr(0, std::min<std::size_t>(text_.size(), 1000)));
      error_ = std::move(d);
    }
    return false;
  }
  Result<Schema> fail(std::size_t at, std::string message) {
    error(at, std::move(message));
    return failure();
  }
  Result<Schema> failure() { return Result<Schema>::failure(*error_); }

  // --- lexing -----------------------------------------------------------------------------

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }
  void skipSpace() {
    while (!atEnd() && isSpace(text_[pos_])) ++pos_;
  }
  bool accept(char c) {
    skipSpace();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool expect(char c, std::string_view what) {
    if (accept(c)) return true;
    return error(pos_, "expected " + std::string(what));
  }
  bool acceptArrow() {
    skipSpace();
    if (text_.substr(pos_, 2) != "->") return false;
    pos_ += 2;
    return true;
  }
  bool expectArrow() {
    if (acceptArrow()) return true;
    return error(pos_, "expected '->' before the returns");
  }
  std::optional<std::string> identifier(std::string_view what) {
    skipSpace();
    if (!isIdentStart(peek())) {
      error(pos_, "expected " + std::string(what));
      return std::nullopt;
    }
    std::size_t start = pos_;
    while (!atEnd() && isIdentChar(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  // --- name -------------------------------------------------------------------------------

  // [namespace::]name[.overload]
  bool parseName(Schema& schema) {
    auto first = identifier("an operator name");
    if (!first) return false;
    if (text_.substr(pos_, 2) == "::") {
      pos_ += 2;
      auto name = identifier("an operator name after '::'");
      if (!name) return false;
      schema.ns = std::move(*first);
      schema.name = std::move(*name);
    } else {
      schema.ns = "aten";
      schema.name = std::move(*first);
    }
    if (peek() == '.') {
      ++pos_;
      if (!isIdentStart(peek())) return error(pos_, "expected an overload name after '.'");
      auto overload = identifier("an overload name");
      if (!overload) return false;
      // torch.library calls the default overload "default"; the table keys it with no suffix.
      schema.overload = *overload == "default" ? std::string() : std::move(*overload);
    }
    return true;
  }

  // --- alias annotations ------------------------------------------------------------------

  // One side of an annotation: `a`, `a|b`, `*`.
  bool parseAliasSets(std::vector<std::string>& sets) {
    do {
      skipSpace();
      if (peek() == '*') {
        ++pos_;
        sets.emplace_back("*");
      } else {
        auto set = identifier("an alias set name or '*'");
        if (!set) return false;
        sets.push_back(std::move(*set));
      }
    } while (accept('|'));
    return true;
  }

  // `(a)`, `(a!)`, `(a -> *)`, `(a|b)`, `(a! -> a|b)`; the caller has seen the '('.
  std::optional<AliasAnnotation> parseAliasAnnotation() {
    AliasAnnotation alias;
    if (!parseAliasSets(alias.beforeSets)) return std::nullopt;
    if (accept('!')) alias.isWrite = true;
    if (acceptArrow() && !parseAliasSets(alias.afterSets)) return std::nullopt;
    if (!expect(')', "')' to close the alias annotation")) return std::nullopt;
    return alias;
  }

  // --- types ------------------------------------------------------------------------------

  // A base type: `Tensor`, `int`, `__torch__.torch.classes.ns.Cls`, `Dict(str, Tensor)`.
  bool parseBaseType(SchemaType& type) {
    skipSpace();
    std::size_t start = pos_;
    if (peek() == '(') return error(pos_, "tuple types are not supported");
    auto name = identifier("a type");
    if (!name) return false;
    while (peek() == '.') {  // dotted class path
      ++pos_;
      if (!isIdentStart(peek())) return error(pos_, "expected a name after '.' in the type");
      identifier("a name");
    }
    if (isCompoundTypeName(*name)) {
      skipSpace();
      if (peek() != '(') return error(pos_, "expected '(' after " + *name);
      // Matched verbatim with a depth counter: the analysis never looks inside.
      int depth = 0;
      do {
        char c = peek();
        if (atEnd()) return error(pos_, "expected ')' to close " + *name + "(...)");
        if (c == '(' && ++depth > kMaxNesting) return error(pos_, "type is nested too deeply");
        if (c == ')') --depth;
        ++pos_;
      } while (depth > 0);
    }
    type.base = std::string(text_.substr(start, pos_ - start));
    // Keep the printed form canonical: no spaces inside compound types.
    type.base.erase(std::remove_if(type.base.begin(), type.base.end(), isSpace), type.base.end());
    return true;
  }

  // type := base [alias] ['?'] ['[' [N] ']' [container-alias] ['?']]
  bool parseType(SchemaType& type) {
    if (!parseBaseType(type)) return false;
    if (accept('(')) {
      auto alias = parseAliasAnnotation();
      if (!alias) return false;
      type.alias = std::move(alias);
    }
    if (accept('?')) type.optional = true;
    skipSpace();
    if (peek() == '[') {
      ++pos_;
      type.isList = true;
      skipSpace();
      if (std::isdigit(static_cast<unsigned char>(peek()))) {
        std::size_t start = pos_;
        while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
        long n = 0;
        auto [ptr, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, n);
        if (ec != std::errc() || ptr != text_.data() + pos_)
          return error(start, "list size is out of range");
        type.fixedSize = n;
      }
      if (!expect(']', "']' to close the list type")) return false;
      skipSpace();
      if (peek() == '(') {  // an explicit container annotation: `t[](a!)`
        ++pos_;
        auto container = parseAliasAnnotation();
        if (!container) return false;
        type.containerAlias = std::move(container);
      } else if (type.alias && type.alias->isWrite) {
        // schema_type_parser.cpp: a written element makes the list container written too.
        type.containerAlias = type.alias;
      }
      if (accept('?')) type.listOptional = true;
    }
    skipSpace();
    if (peek() == '[') return error(pos_, "nested list types are not supported");
    if (peek() == '?') return error(pos_, "'?' may follow a type only once");
    return true;
  }

  // --- defaults ---------------------------------------------------------------------------

  // A default value, kept verbatim: `1`, `-1`, `0.1`, `1e-05`, `True`, `None`, `'none'`,
  // `"none"`, `[0,1]`, `[]`, `contiguous_format`, `long`, `at::Reduction::Mean`.
  std::optional<std::string> parseDefault() {
    skipSpace();
    std::size_t start = pos_;
    std::string closers;  // the brackets still open, innermost last; at most kMaxNesting
    do {
      if (atEnd()) {
        if (closers.empty()) error(pos_, "expected a default value");
        else error(pos_, std::string("expected '") + closers.back() + "' to close the default value");
        return std::nullopt;
      }
      char c = text_[pos_];
      if (c == '\'' || c == '"') {
        std::size_t quote = pos_++;
        while (!atEnd() && text_[pos_] != c) pos_ += (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ? 2 : 1;
        if (atEnd()) {
          error(quote, std::string("unterminated string in default value (missing ") + c + ")");
          return std::nullopt;
        }
        ++pos_;
      } else if (c == '[' || c == '(') {
        if (closers.size() >= static_cast<std::size_t>(kMaxNesting)) {
          error(pos_, "default value is nested too deeply");
          return std::nullopt;
        }
        closers.push_back(c == '[' ? ']' : ')');
        ++pos_;
      } else if (!closers.empty() && c == closers.back()) {
        closers.pop_back();
        ++pos_;
      } else if (!closers.empty() && (c == ',' || isSpace(c))) {
        ++pos_;
      } else if (isIdentChar(c) || c == '.' || c == '-' || c == '+' || c == ':') {
        while (!atEnd() && (isIdentChar(text_[pos_]) || text_[pos_] == '.' || text_[pos_] == '-' ||
                            text_[pos_] == '+' || text_[pos_] == ':'))
          ++pos_;
      } else if (!closers.empty()) {
        error(pos_, std::string("expected a value or '") + closers.back() + "' in the default value");
        return std::nullopt;
      } else {
        error(pos_, "expected a default value");
        return std::nullopt;
      }
    } while (!closers.empty());
    return std::string(text_.substr(start, pos_ - start));
  }

  // --- arguments and returns --------------------------------------------------------------

  bool parseArguments(std::vector<SchemaArgument>& arguments) {
    if (accept(')')) return true;
    bool kwargOnly = false;
    std::set<std::string, std::less<>> names;
    while (true) {
      skipSpace();
      if (peek() == '*') {
        std::size_t star = pos_;
        ++pos_;
        if (kwargOnly) return error(star, "'*' appears twice");
        kwargOnly = true;
        skipSpace();
        if (peek() == ')') return error(pos_, "expected a keyword-only argument after '*'");
      } else if (text_.substr(pos_, 3) == "...") {
        return error(pos_, "varargs '...' are not supported");
      } else {
        SchemaArgument argument;
        argument.kwargOnly = kwargOnly;
        if (!parseType(argument.type)) return false;
        skipSpace();
        std::size_t nameAt = pos_;
        auto name = identifier("an argument name");
        if (!name) return false;
        if (!names.insert(*name).second) return error(nameAt, "duplicate argument name '" + *name + "'");
        argument.name = std::move(*name);
        if (accept('=')) {
          auto value = parseDefault();
          if (!value) return false;
          argument.defaultValue = std::move(value);
        }
        arguments.push_back(std::move(argument));
      }
      if (accept(')')) return true;
      if (!expect(',', "',' or ')' after an argument")) return false;
    }
  }

  bool parseReturn(std::vector<SchemaArgument>& returns) {
    SchemaArgument ret;
    if (!parseType(ret.type)) return false;
    skipSpace();
    if (isIdentStart(peek())) ret.name = *identifier("a return name");
    skipSpace();
    if (peek() == '=') return error(pos_, "returns have no default values");
    returns.push_back(std::move(ret));
    return true;
  }

  bool parseReturns(std::vector<SchemaArgument>& returns) {
    if (!accept('(')) return parseReturn(returns);
    if (accept(')')) return true;
    while (true) {
      if (!parseReturn(returns)) return false;
      if (accept(')')) return true;
      if (!expect(',', "',' or ')' after a return")) return false;
    }
  }
};

std::string joinSets(const std::vector<std::string>& sets) {
  std::string out;
  for (std::size_t i = 0; i < sets.size(); ++i) out += (i ? "|" : "") + sets[i];
  return out;
}

std::string formatAlias(const AliasAnnotation& alias) {
  std::string out = "(" + joinSets(alias.beforeSets);
  if (alias.isWrite) out += "!";
  if (!alias.afterSets.empty()) out += " -> " + joinSets(alias.afterSets);
  return out + ")";
}

std::string formatType(const SchemaType& type) {
  std::string out = type.base;
  if (type.alias) out += formatAlias(*type.alias);
  if (type.optional) out += "?";
  if (type.isList) {
    out += "[";
    if (type.fixedSize) out += std::to_string(*type.fixedSize);
    out += "]";
    // The container annotation is implied when it is the copy of a written element's.
    std::optional<AliasAnnotation> implied;
    if (type.alias && type.alias->isWrite) implied = type.alias;
    if (type.containerAlias != implied && type.containerAlias) out += formatAlias(*type.containerAlias);
    if (type.listOptional) out += "?";
  }
  return out;
}

std::string formatArgument(const SchemaArgument& argument) {
  std::string out = formatType(argument.type);
  if (!argument.name.empty()) out += " " + argument.name;
  if (argument.defaultValue) out += "=" + *argument.defaultValue;
  return out;
}

// Positional arity bounds of a schema: required positional arguments .. all positional ones.
std::pair<std::size_t, std::size_t> positionalArity(const Schema& schema) {
  std::size_t required = 0, all = 0;
  for (const SchemaArgument& a : schema.arguments) {
    if (a.kwargOnly) continue;
    ++all;
    if (!a.defaultValue) required = all;
  }
  return {required, all};
}

}  // namespace

// ---------------------------------------------------------------------------------------------

bool SchemaType::isWrite() const {
  return (alias && alias->isWrite) || (containerAlias && containerAlias->isWrite);
}

std::string Schema::qualifiedName() const {
  std::string out = ns + "::" + name;
  if (!overload.empty()) out += "." + overload;
  return out;
}

bool Schema::isInplaceKind() const {
  // torchgen/model.py BaseOperatorName.parse: dunders are in-place only when augmented.
  if (name.size() > 4 && name.starts_with("__") && name.ends_with("__")) {
    static constexpr std::array<std::string_view, 11> kAugmented = {
        "add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or"};
    std::string_view inner = std::string_view(name).substr(2, name.size() - 4);
    if (!inner.starts_with("i")) return false;
    inner.remove_prefix(1);
    return std::find(kAugmented.begin(), kAugmented.end(), inner) != kAugmented.end();
  }
  return name.ends_with("_") && !name.ends_with("__");
}

bool Schema::isMutable() const {
  return std::any_of(arguments.begin(), arguments.end(),
                     [](const SchemaArgument& a) { return a.type.isWrite(); });
}

std::optional<std::size_t> Schema::argumentIndex(std::string_view argName) const {
  for (std::size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i].name == argName) return i;
  return std::nullopt;
}

Result<Schema> parseSchema(std::string_view text, std::string_view origin, int line) {
  return SchemaParser(text, origin, line).parse();
}

std::string formatSchema(const Schema& schema) {
  std::string out = schema.qualifiedName() + "(";
  for (std::size_t i = 0; i < schema.arguments.size(); ++i) {
    const SchemaArgument& a = schema.arguments[i];
    if (i) out += ", ";
    if (a.kwargOnly && (i == 0 || !schema.arguments[i - 1].kwargOnly)) out += "*, ";
    out += formatArgument(a);
  }
  out += ") -> ";
  if (schema.returns.size() == 1) return out + formatArgument(schema.returns[0]);
  out += "(";
  for (std::size_t i = 0; i < schema.returns.size(); ++i) {
    if (i) out += ", ";
    out += formatArgument(schema.returns[i]);
  }
  return out + ")";
}

// ---------------------------------------------------------------------------------------------

namespace {

// A return's alias set shared with an argument's (`*` matches everything).
bool sharesAliasSet(const AliasAnnotation& ret, const AliasAnnotation& arg) {
  auto hit = [&](const std::string& set) {
    if (set == "*") return true;
    for (const std::string& a : arg.beforeSets)
      if (a == set || a == "*") return true;
    for (const std::string& a : arg.afterSets)
      if (a == set || a == "*") return true;
    return false;
  };
  for (const std::string& set : ret.beforeSets)
    if (hit(set)) return true;
  return false;
}

const AliasAnnotation* annotationOf(const SchemaType& type) {
  if (type.alias) return &*type.alias;
  if (type.containerAlias) return &*type.containerAlias;
  return nullptr;
}

}  // namespace

SchemaAliasFacts deriveAliasFacts(const Schema& schema) {
  SchemaAliasFacts facts;
  facts.inplaceKind = schema.isInplaceKind();
  for (const SchemaArgument& ret : schema.returns) {
    SchemaAliasFacts::Return r;
    r.tensor = ret.type.isTensor();
    const AliasAnnotation* retAlias = annotationOf(ret.type);
    r.annotated = r.tensor && retAlias && !retAlias->beforeSets.empty();
    if (r.annotated)
      for (std::size_t k = 0; k < schema.arguments.size(); ++k) {
        const AliasAnnotation* argAlias = annotationOf(schema.arguments[k].type);
        if (!argAlias || !sharesAliasSet(*retAlias, *argAlias)) continue;
        r.matched = true;
        r.aliasedArguments.push_back(static_cast<std::uint32_t>(k));
      }
    facts.returns.push_back(std::move(r));
  }
  for (std::size_t k = 0; k < schema.arguments.size(); ++k)
    if (schema.arguments[k].type.isWrite()) facts.writtenArguments.push_back(static_cast<std::uint32_t>(k));
  return facts;
}

const SchemaTable::Entry* SchemaTable::entry(std::string_view key, std::uint64_t h) const {
  for (const Layer* layer = top_.get(); layer; layer = layer->below.get())
    if (const std::uint32_t id = layer->index.findHashed(key, h); id != layer->index.kNone) return &layer->entries[id];
  return nullptr;
}

bool SchemaTable::contains(std::string_view key) const { return entry(key) != nullptr; }

std::vector<const Schema*> SchemaTable::all() const {
  std::map<std::string_view, const Schema*> merged;  // the topmost layer's schema per key
  for (const Layer* layer = top_.get(); layer; layer = layer->below.get())
    for (const auto& [key, schema] : layer->byName) merged.emplace(key, &schema);
  std::vector<const Schema*> out;
  out.reserve(merged.size());
  for (const auto& [key, schema] : merged) out.push_back(schema);
  return out;
}

std::size_t SchemaTable::size() const {
  std::size_t n = 0;
  for (const Layer* layer = top_.get(); layer; layer = layer->below.get())
    for (const auto& [key, schema] : layer->byName) {
      bool shadowed = false;  // the same key in a layer above counts there
      for (const Layer* above = top_.get(); above != layer && !shadowed; above = above->below.get())
        shadowed = above->byName.count(key) > 0;
      n += !shadowed;
    }
  return n;
}

const Schema* SchemaTable::find(std::string_view target, std::optional<std::size_t> positionalArgs) const {
  return lookup(target, positionalArgs).schema;
}

SchemaTable::Found SchemaTable::lookup(std::string_view target, std::optional<std::size_t> positionalArgs) const {
  return lookupHashed(target, hashName(target), positionalArgs);
}

SchemaTable::Found SchemaTable::lookupHashed(std::string_view target, std::uint64_t targetHash,
                                             std::optional<std::size_t> positionalArgs) const {
  auto found = [](const Entry* e) { return e ? Found{e->schema, &e->facts} : Found{}; };
  if (const Entry* e = entry(target, targetHash)) return found(e);
  // torch.library's explicit spelling of the default overload.
  if (target.ends_with(".default")) {
    std::string_view packet = target.substr(0, target.size() - std::string_view(".default").size());
    if (const Entry* e = entry(packet)) return found(e);
  }
  // An overload packet ("aten::add"): the overloads are the keys "aten::add.<overload>", in
  // any layer (each key once: entry() picks the topmost).
  std::string prefix = std::string(target) + ".";
  std::vector<std::string_view> overloads;
  for (const Layer* layer = top_.get(); layer; layer = layer->below.get())
    for (auto it = layer->byName.lower_bound(prefix); it != layer->byName.end() && it->first.starts_with(prefix); ++it)
      if (it->first.find('.', prefix.size()) == std::string::npos) overloads.push_back(it->first);
  std::sort(overloads.begin(), overloads.end());
  overloads.erase(std::unique(overloads.begin(), overloads.end()), overloads.end());
  if (overloads.size() == 1) return found(entry(overloads.front()));
  if (overloads.empty() || !positionalArgs) return {};
  // Several overloads: among those whose positional arity fits, prefer one that writes
  // nothing (a call without `out=` is not the `.out` overload), then ATen's primary `.Tensor`,
  // then the alphabetically first, so the choice is deterministic.
  const Entry* best = nullptr;
  auto rank = [](const Schema* s) { return std::pair{s->isMutable() && !s->isInplaceKind(), s->overload != "Tensor"}; };
  for (std::string_view key : overloads) {
    const Entry* e = entry(key);
    auto [required, most] = positionalArity(*e->schema);
    if (*positionalArgs < required || *positionalArgs > most) continue;
    if (!best || rank(e->schema) < rank(best->schema)) best = e;
  }
  return found(best);
}

void SchemaTable::insert(Layer& layer, Schema schema, const SchemaAliasFacts* facts) {
  std::string key = schema.qualifiedName();
  SchemaAliasFacts derived = facts ? *facts : deriveAliasFacts(schema);
  // insert_or_assign keeps an existing node, so entry keys and schema pointers stay valid.
  auto [it, inserted] = layer.byName.insert_or_assign(std::move(key), std::move(schema));
  if (!inserted) {
    Entry& e = layer.entries[layer.index.find(it->first)];
    e.facts = std::move(derived);
    return;
  }
  layer.entries.push_back(Entry{it->first, &it->second, std::move(derived)});
  layer.index.insert(static_cast<std::uint32_t>(layer.entries.size() - 1));
}

void SchemaTable::add(Schema schema) {
  // Lookups walk the layers, so a long chain (a table copied and extended over and over) is
  // flattened into one layer.
  constexpr std::size_t kMaxDepth = 4;
  if (!top_) {
    top_ = std::make_shared<Layer>();
  } else if (top_.use_count() > 1) {
    // Shared: the other tables keep what they had; this one grows a layer of its own.
    auto layer = std::make_shared<Layer>();
    layer->depth = top_->depth + 1;
    layer->below = std::move(top_);
    top_ = std::move(layer);
    if (top_->depth > kMaxDepth) {
      auto flat = std::make_shared<Layer>();
      for (const Schema* s : all()) insert(*flat, *s, &entry(s->qualifiedName())->facts);
      top_ = std::move(flat);
    }
  }
  insert(*top_, std::move(schema), nullptr);
}

std::vector<Diagnostic> SchemaTable::addAll(std::string_view text, std::string_view origin) {
  std::vector<Diagnostic> errors;
  int lineNumber = 0;
  while (!text.empty()) {
    ++lineNumber;
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t first = 0;
    while (first < line.size() && isSpace(line[first])) ++first;
    if (first == line.size() || line[first] == '#') continue;
    Result<Schema> parsed = parseSchema(line, origin, lineNumber);
    if (parsed) add(std::move(*parsed));
    else errors.insert(errors.end(), parsed.errors.begin(), parsed.errors.end());
  }
  return errors;
}

SchemaTable builtinSchemas() {
  SchemaTable table;
  // The table is tested to parse completely (tests/schema_test.cpp), so errors cannot occur in
  // a released build; should one slip in, the entry is simply absent (treated as schema-less).
  table.addAll(builtinSchemaText(), "core/schemas.txt");
  return table;
}

}  // namespace wb
