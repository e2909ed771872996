// core/text_reader.cpp: readProgram (core/text.h): the structure of the three printed forms.
//
// The reader finds where the program starts, reads what comes before it (comments; for module
// code the statements of a Python module), the graph in the form it finds there --
// `ExportedProgram:` / `class` (forms 1 and 2), a bare `def forward` (form 2), `graph():`
// (form 3) -- and then the sections that may follow: the graph signature (text or repr form,
// with or without its heading), `Schemas:`, `Range constraints:`. Any other text is an error:
// nothing is skipped unread. A node line of forward() in the form PyTorch prints nearly every
// node in is read straight into its node (text_node_line.cpp), and a signature line in the
// writer's form straight into its spec (text_spec_line.cpp); every other statement is lexed
// and parsed by text_lexer.cpp and text_parser.cpp. Both define nodes through the GraphBuilder
// of text_graph.h.
#include <algorithm>
#include <initializer_list>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include "core/text.h"
#include "core/text_graph.h"
#include "core/text_syntax.h"

namespace wb {
namespace text {
namespace {

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Pos linePos(std::size_t lineIndex, std::size_t column0 = 0) {
  return {static_cast<int>(lineIndex + 1), static_cast<int>(column0 + 1)};
}

std::string positionText(Pos pos) { return "line " + std::to_string(pos.line); }

// ---------------------------------------------------------------------------------------------

// A signature of a small program: its inputs and its outputs, a dozen each at most.
constexpr std::size_t kExpectedSpecs = 16;

template <typename Spec>
struct Located {
  Spec spec;
  Pos pos;
};

class ProgramReader {
 public:
  // `commonLines`: whether the common node lines of forward() and the common lines of a text
  // signature take the direct paths (readCommonNodeLine, readCommonSpecLine); without it every
  // line goes through tokens (and Exprs).
  ProgramReader(const Source& source, const ReadLimits& limits, bool commonLines)
      : source_(source), limits_(limits), commonLines_(commonLines) {}

  // `nodeLocations`, if given, receives where each node of the main graph was defined.
  Program read(std::vector<SourceLocation>* nodeLocations = nullptr) {
    const std::size_t start = findStart();
    const bool moduleCode = isModuleCode(source_.stripped(start));
    readPrelude(start, moduleCode);
    std::size_t line = start;
    // A node is at least one line of the printout.
    GraphBuilder main(source_, limits_, nodeCount_, std::min(source_.lineCount(), limits_.maxNodes));
    readMainGraph(line, main);
    readSections(line, moduleCode);
    main.checkReferences();
    program_.graph = std::move(main.graph);
    if (signatureFound_) {
      checkSignature(main);
    } else {
      program_.signature = inferSignature(program_.graph, std::move(main.hints));
      program_.signatureInferred = true;
    }
    if (nodeLocations) *nodeLocations = main.locationsOf(program_.graph.nodes);
    return std::move(program_);
  }

 private:
  // --- Where the program starts ------------------------------------------------------------

  static bool isStartLine(std::string_view s) {
    return s == "ExportedProgram:" || startsWith(s, "class ") || startsWith(s, "def forward(") ||
           startsWith(s, "graph(");
  }

  // Form 2 (`class ...` or a bare `def forward`) is Python module code: a minifier repro puts
  // imports before it and driver code after it. Forms 1 and 3 are printouts with nothing
  // around them but comments and the sections that follow the graph.
  static bool isModuleCode(std::string_view startLine) {
    return startsWith(startLine, "class ") || startsWith(startLine, "def forward(");
  }

  // The lines before the program: blank lines and comments, and for module code the
  // statements of the module (read by readModuleStatement).
  void readPrelude(std::size_t start, bool moduleCode) {
    std::size_t line = 0;
    while (line < start) {
      if (source_.isBlankOrComment(line)) { ++line; continue; }
      if (!moduleCode)
        source_.fail(linePos(line, source_.indentOf(line)),
                     "unexpected text before the program (only comments may precede '" +
                         std::string(source_.stripped(start)) + "')");
      const std::size_t statement = line;
      readModuleStatement(line);
      if (line > start)
        source_.fail(linePos(statement, source_.indentOf(statement)),
                     "this statement runs into the program at line " + std::to_string(start + 1));
    }
  }

  std::size_t findStart() const {
    for (std::size_t i = 0; i < source_.lineCount(); ++i) {
      if (source_.isBlankOrComment(i)) continue;
      if (isStartLine(source_.stripped(i))) return i;
    }
    bool empty = true;
    for (std::size_t i = 0; i < source_.lineCount() && empty; ++i) empty = source_.isBlankOrComment(i);
    source_.fail({1, 1}, empty ? "empty input: expected a program"
                               : "no program found: expected 'ExportedProgram:', 'class ...(torch.nn.Module):', "
                                 "'def forward(self, ...):' or 'graph():'");
  }

  void readMainGraph(std::size_t& line, GraphBuilder& main) {
    std::string_view s = source_.stripped(line);
    if (s == "ExportedProgram:") {
      std::size_t heading = line++;
      while (line < source_.lineCount() && source_.isBlankOrComment(line)) ++line;
      if (line >= source_.lineCount() || !startsWith(source_.stripped(line), "class "))
        source_.fail(linePos(line < source_.lineCount() ? line : heading, line < source_.lineCount() ? source_.indentOf(line) : 0),
                     "expected 'class GraphModule(torch.nn.Module):' after 'ExportedProgram:'");
      readClass(line, main, 0);
    } else if (startsWith(s, "class ")) {
      readClass(line, main, 0);
    } else if (startsWith(s, "def forward(")) {
      readForward(line, main);
    } else {
      readStrGraph(line, main);
    }
  }

  // --- Classes (forms 1 and 2) -------------------------------------------------------------

  static std::string className(std::string_view header) {
    if (header.size() <= 6) return "";
    std::string_view rest = header.substr(6);
    std::size_t end = rest.find_first_of("(:");
    return std::string(trim(rest.substr(0, end)));
  }

  void readClass(std::size_t& line, GraphBuilder& builder, std::size_t depth) {
    const std::size_t classLine = line;
    const std::size_t classIndent = source_.indentOf(line);
    const Pos classPos = linePos(line, classIndent);
    std::string_view header = source_.stripped(line);
    if (std::size_t hash = header.find('#'); hash != std::string_view::npos) header = trim(header.substr(0, hash));
    std::string name = className(header);
    if (name.empty()) source_.fail(classPos, "class without a name");
    if (!endsWith(header, ":"))
      source_.fail(linePos(line, classIndent + header.size()), "expected ':' at the end of the class line");
    if (depth > limits_.maxNesting)
      source_.fail(classPos, "classes nested too deeply (limit " + std::to_string(limits_.maxNesting) + ")");
    ++line;
    bool haveForward = false;
    while (line < source_.lineCount()) {
      if (source_.isBlank(line)) { ++line; continue; }
      // A comment belongs to the class if code of the class follows it: `# inputs` after the
      // class starts a signature.
      if (source_.isBlankOrComment(line) && source_.indentOf(line) > classIndent) { ++line; continue; }
      if (source_.isBlankOrComment(line)) {
        std::size_t next = line;
        while (next < source_.lineCount() && source_.isBlankOrComment(next)) ++next;
        if (next < source_.lineCount() && source_.indentOf(next) > classIndent) {
          line = next;
          continue;
        }
        break;
      }
      if (source_.indentOf(line) <= classIndent) break;
      std::string_view s = source_.stripped(line);
      if (startsWith(s, "def forward(")) {
        if (haveForward) source_.fail(linePos(line, source_.indentOf(line)), "second forward() in class " + name);
        readForward(line, builder);
        haveForward = true;
      } else if (startsWith(s, "def ")) {
        readModuleStatement(line);  // __init__ of a repro, helper methods: not part of the graph
      } else if (startsWith(s, "class ")) {
        readSubmodule(line, depth + 1);
      } else if (startsWith(s, "\"\"\"") || startsWith(s, "'''")) {
        ++line;  // a one-line docstring
      } else {
        source_.fail(linePos(line, source_.indentOf(line)), "unexpected line in the body of class " + name +
                                                                " (expected 'def forward(self, ...):' or a nested class)");
      }
    }
    if (!haveForward) source_.fail(linePos(classLine, classIndent), "class " + name + " has no forward()");
  }

  // A nested class is a control-flow branch: a submodule with a graph of its own. Submodules are
  // kept flat, in the order their classes start.
  void readSubmodule(std::size_t& line, std::size_t depth) {
    std::size_t slot = program_.submodules.size();
    program_.submodules.push_back(Submodule{className(source_.stripped(line)), {}});
    GraphBuilder builder(source_, limits_, nodeCount_, kExpectedSubmoduleNodes);
    readClass(line, builder, depth);
    builder.checkReferences();
    program_.submodules[slot].graph = std::move(builder.graph);
  }

  // --- Python module code around form 2 -----------------------------------------------------
  //
  // A minifier repro is a Python module: imports, assignments and calls, `def`/`if`/`with`
  // blocks (load_args, the `__main__` driver), and the class whose forward() is the program.
  // Each top-level statement outside the class must be one of those kinds; the body of a
  // block other than forward() is lexed (every token valid, every bracket closed) but not
  // interpreted. Anything else -- prose, a second program -- is an error.

  static bool isBlockKeyword(const Token& t) {
    static constexpr std::string_view kKeywords[] = {"def", "if", "elif", "else", "with", "for", "while",
                                                     "try", "except", "finally", "async"};
    if (t.kind != TokenKind::Name) return false;
    for (std::string_view k : kKeywords)
      if (t.text == k) return true;
    return false;
  }

  void readModuleStatement(std::size_t& line) {
    const std::size_t indent = source_.indentOf(line);
    TokenCursor c = lexAt(line);
    const Token head = c.peek();
    if (head.isName("import") || head.isName("from")) return readImport(c);
    if (isBlockKeyword(head)) {
      Token last = head;
      while (!c.atEnd()) last = c.next();
      if (!last.isPunct(":")) c.fail(c.peek(), "expected ':' at the end of the '" + std::string(head.text) + "' line");
      c.expectEnd("after ':'");
      return readBlockBody(line, indent, head);
    }
    const char* expected =
        "expected a Python statement outside the program (an import, an assignment, a call, or a def/if/with block)";
    if (head.kind != TokenKind::Name) c.fail(head, expected);
    Expr first = c.parseExpr();
    if (c.acceptPunct("=")) {
      if (first.kind != Expr::Kind::Name && first.kind != Expr::Kind::Subscript) c.fail(head, expected);
      c.parseExpr();
      while (c.acceptPunct("=")) c.parseExpr();
    } else if (first.kind != Expr::Kind::Call) {
      c.fail(c.atEnd() ? head : c.peek(), expected);
    }
    c.expectEnd("after the statement");
  }

  // import a.b [as c], d | from a.b import x [as y], (p, q) | from m import *
  static void readImport(TokenCursor& c) {
    const Token keyword = c.next();
    bool sawImport = keyword.isName("import");
    bool wantName = true;
    while (!c.atEnd()) {
      const Token& t = c.next();
      if (t.isName("import") && !sawImport) { sawImport = true; wantName = true; continue; }
      if (t.kind == TokenKind::Name && !t.isName("import")) { wantName = false; continue; }
      if (t.isPunct("*")) { wantName = false; continue; }
      if (t.isPunct(".") || t.isPunct(",") || t.isPunct("(") || t.isPunct(")")) continue;
      c.fail(t, "unexpected token in an import statement");
    }
    if (!sawImport || wantName) c.fail(c.peek(), "incomplete import statement");
    c.expectEnd("after the import");
  }

  // The indented lines after a block's header line, lexed logical line by logical line.
  void readBlockBody(std::size_t& line, std::size_t headerIndent, const Token& header) {
    bool any = false;
    while (line < source_.lineCount()) {
      if (source_.isBlankOrComment(line)) { ++line; continue; }
      if (source_.indentOf(line) <= headerIndent) break;
      lexLogicalLine(source_, line, limits_);
      any = true;
    }
    if (!any) source_.fail(header.pos, "the '" + std::string(header.text) + "' block has no body");
  }

  // --- def forward (forms 1 and 2) ---------------------------------------------------------

  TokenCursor lexAt(std::size_t& line) {
    return TokenCursor(source_, lexLogicalLine(source_, line, limits_), limits_);
  }

  void readForward(std::size_t& line, GraphBuilder& builder) {
    const std::size_t defLine = line;
    const std::size_t defIndent = source_.indentOf(line);
    if (commonLines_ && readCommonForwardHeader(line, defIndent, builder, nodeLineScratch_)) {
      ++line;
    } else {
      TokenCursor header = lexAt(line);
      readForwardHeader(header, builder);
    }
    while (true) {
      if (line >= source_.lineCount())
        source_.fail(linePos(defLine, defIndent), "forward() has no 'return' (the input ends first)");
      // The line's indentation is scanned once, for all three uses.
      const std::size_t indent = source_.indentOf(line);
      if (source_.isBlankOrComment(line, indent)) { ++line; continue; }
      if (indent <= defIndent)
        source_.fail(linePos(line, indent),
                     "expected 'return' before the end of forward() (defined at line " + std::to_string(defLine + 1) + ")");
      // Nearly every line: a node in the form PyTorch prints, read without tokens.
      if (commonLines_ && readCommonNodeLine(line, indent, builder, nodeLineScratch_)) {
        ++line;
        continue;
      }
      if (commonLines_ && readCommonReturnLine(line, indent, builder, nodeLineScratch_)) {
        ++line;
        break;
      }
      TokenCursor statement = lexAt(line);
      if (statement.peek().isName("return")) {
        readReturn(statement, builder);
        break;
      }
      readStatement(statement, builder);
    }
    rejectStatementsAfterReturn(line, defIndent);
  }

  void rejectStatementsAfterReturn(std::size_t line, std::size_t defIndent) const {
    for (; line < source_.lineCount(); ++line) {
      if (source_.isBlankOrComment(line)) continue;
      if (source_.indentOf(line) > defIndent)
        source_.fail(linePos(line, source_.indentOf(line)), "statement after 'return' in forward()");
      return;
    }
  }

  void readForwardHeader(TokenCursor& c, GraphBuilder& builder) {
    c.expectName("def");
    c.expectName("forward");
    c.expectPunct("(", "after 'def forward'");
    if (!c.acceptName("self")) c.fail(c.peek(), "expected 'self' as the first parameter of forward()");
    while (c.acceptPunct(",")) {
      if (c.peek().isPunct(")")) break;
      if (c.peek().isPunct("*")) c.fail(c.peek(), "variadic or keyword-only parameters are not supported");
      const Token& name = c.expectName("(a parameter of forward)");
      Node node;
      node.name = name.text;
      node.op = NodeOp::Placeholder;
      node.target = name.text;
      if (c.acceptPunct(":")) node.typeText = readAnnotation(c);
      if (c.acceptPunct("=")) c.parseExpr();  // a default value: not part of the graph
      builder.define(std::move(node), name.pos);
    }
    c.expectPunct(")", "to close the parameters of forward()");
    if (c.acceptPunct("->")) c.parseExpr();
    c.expectPunct(":", "at the end of the 'def forward(...)' line");
    c.expectEnd("after 'def forward(...):'");
  }

  // A type annotation: a string ("f32[4]") or, in older printouts, bare text (f32[4]) up to
  // the next ',', ')' or '=' outside brackets.
  std::string readAnnotation(TokenCursor& c) {
    const Token first = c.peek();
    if (first.kind == TokenKind::String && (c.peek(1).isPunct(",") || c.peek(1).isPunct(")") || c.peek(1).isPunct("="))) {
      c.next();
      checkShape(first.text, first.pos);
      return std::string(first.text);
    }
    int depth = 0;
    Token last = first;
    while (!c.atEnd()) {
      const Token& t = c.peek();
      if (depth == 0 && (t.isPunct(",") || t.isPunct(")") || t.isPunct("="))) break;
      if (t.isPunct("(") || t.isPunct("[") || t.isPunct("{")) ++depth;
      if (t.isPunct(")") || t.isPunct("]") || t.isPunct("}")) --depth;
      last = c.next();
    }
    if (last.pos.line == first.pos.line && last.pos.column == first.pos.column && first.kind == TokenKind::End)
      c.fail(first, "expected a type annotation after ':'");
    std::string text = rawText(first, last);
    if (text.empty()) c.fail(first, "expected a type annotation after ':'");
    checkShape(text, first.pos);
    return text;
  }

  std::string rawText(const Token& first, const Token& last) const {
    if (first.pos.line == last.end.line && last.end.column >= first.pos.column) {
      std::string_view l = source_.line(static_cast<std::size_t>(first.pos.line - 1));
      return std::string(l.substr(static_cast<std::size_t>(first.pos.column - 1),
                                  static_cast<std::size_t>(last.end.column - first.pos.column)));
    }
    return std::string(first.text) + " ... " + std::string(last.text);
  }

  void checkShape(std::string_view type, Pos pos) const { text::checkShape(source_, limits_, type, pos); }

  // name[: "type"] = expression[;  x = None ...][  # meta: k=v]
  // or the unpacking of unlifted code: x, y, = fx_pytree.tree_flatten_spec(...)
  void readStatement(TokenCursor& c, GraphBuilder& builder) {
    if (c.peek().kind != TokenKind::Name)
      c.fail(c.peek(), "expected 'name = ...' or 'return' in forward()");
    const Token name = c.next();
    if (c.peek().isPunct(",")) {
      readUnpacking(c, builder, name);
      return;
    }
    std::string typeText;
    if (c.acceptPunct(":")) typeText = readAnnotation(c);
    if (!c.acceptPunct("=")) c.expectPunct("=", "after the node name '" + std::string(name.text) + "'");
    if (c.atEnd()) c.fail(c.peek(), "expected an expression after '='");
    Expr rhs = c.parseExpr();
    readDeletions(c);
    const Token& commentToken = c.peek();
    std::string comment = c.expectEnd("after the node's expression");
    Node node = nodeFromExpression(name.text, rhs, builder);
    node.typeText = std::move(typeText);
    node.meta = parseMeta(comment, commentToken.pos);
    builder.define(std::move(node), name.pos);
  }

  // `;  a = b = None`: FX's deletion of dead values. Checked for shape, otherwise ignored.
  static void readDeletions(TokenCursor& c) {
    while (c.acceptPunct(";")) {
      do {
        c.expectName("in a ';  x = None' deletion");
        c.expectPunct("=", "in a ';  x = None' deletion");
      } while (!c.acceptName("None"));
    }
  }

  void readUnpacking(TokenCursor& c, GraphBuilder& builder, const Token& first) {
    std::vector<Token> names{first};
    while (c.acceptPunct(",")) {
      if (c.peek().isPunct("=")) break;
      names.push_back(c.expectName("in the unpacking"));
    }
    c.expectPunct("=", "after the unpacked names");
    Expr rhs = c.parseExpr();
    readDeletions(c);
    c.expectEnd("after the unpacking");
    if (rhs.kind != Expr::Kind::Call || !endsWith(rhs.text, "tree_flatten_spec"))
      c.fail(first, "unsupported tuple assignment (only 'x, = fx_pytree.tree_flatten_spec(...)' is understood)");
    // The unpacked names are the placeholder nodes of unlifted code, in parameter order.
    std::vector<std::size_t> placeholders;
    for (std::size_t i = 0; i < builder.graph.nodes.size(); ++i)
      if (builder.graph.nodes[i].isPlaceholder()) placeholders.push_back(i);
    if (placeholders.size() != names.size())
      c.fail(first, "the unpacking names " + std::to_string(names.size()) + " values but forward() has " +
                        std::to_string(placeholders.size()) + " parameters");
    for (std::size_t i = 0; i < names.size(); ++i)
      if (builder.graph.nodes[placeholders[i]].name != names[i].text)
        builder.renamePlaceholder(placeholders[i], names[i].text, names[i].pos);
  }

  Node nodeFromExpression(std::string_view name, const Expr& rhs, GraphBuilder& builder) {
    Node node;
    node.name = name;
    if (rhs.kind == Expr::Kind::Call) {
      if (startsWith(rhs.text, "self.")) {
        node.op = NodeOp::CallModule;
        node.target = rhs.text.substr(5);
      } else {
        node.op = NodeOp::CallFunction;
        node.target = builder.callTarget(rhs.text);
      }
      for (const Expr& a : rhs.items) node.args.push_back(builder.toArg(a));
      for (std::size_t i = 0; i < rhs.keywordNames.size(); ++i)
        node.kwargs.emplace_back(rhs.keywordNames[i], builder.toArg(rhs.keywordValues[i]));
      return node;
    }
    if (rhs.kind == Expr::Kind::Name && startsWith(rhs.text, "self.")) {
      node.op = NodeOp::GetAttr;
      node.target = rhs.text.substr(5);
      return node;
    }
    node.op = NodeOp::CallFunction;
    if (rhs.kind == Expr::Kind::Subscript) {
      const Expr& base = rhs.items[0];
      if (base.kind != Expr::Kind::Name || base.text.find('.') != std::string::npos)
        source_.fail(base.pos, "only a node can be subscripted ('getitem = split[0]')");
      node.target = builder.targets("operator.getitem");
      node.args = {builder.toArg(base), builder.toArg(rhs.items[1])};
      return node;
    }
    if (rhs.kind == Expr::Kind::Binary || rhs.kind == Expr::Kind::Unary) {
      node.target = builder.targets("operator." + operatorName(rhs));
      for (const Expr& operand : rhs.items) node.args.push_back(builder.toArg(operand));
      return node;
    }
    source_.fail(rhs.pos, "expected a call, 'self.attribute' or 'x[i]' on the right of '='");
  }

  static std::string operatorName(const Expr& e) {
    static const std::pair<std::string_view, std::string_view> kBinary[] = {
        {"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "truediv"}, {"//", "floordiv"}, {"%", "mod"},
        {"**", "pow"}, {"==", "eq"}, {"!=", "ne"}, {"<", "lt"}, {"<=", "le"}, {">", "gt"}, {">=", "ge"},
        {"&", "and_"}, {"|", "or_"}, {"^", "xor"}, {"@", "matmul"}};
    if (e.kind == Expr::Kind::Unary) return e.text == "-" ? "neg" : "invert";
    for (const auto& [symbol, name] : kBinary)
      if (symbol == e.text) return std::string(name);
    return e.text;
  }

  NodeMeta parseMeta(std::string_view comment, Pos pos) const { return text::parseMeta(source_, comment, pos); }

  // return (a, b) | return a | return pytree.tree_unflatten((a,), self._out_spec) | return
  void readReturn(TokenCursor& c, GraphBuilder& builder) {
    const Token returnToken = c.next();
    Node output;
    output.name = "output";
    output.op = NodeOp::Output;
    output.target = "output";
    if (!c.atEnd()) {
      Expr value = c.parseExpr();
      if (c.peek().isPunct(",")) {
        Expr tuple;
        tuple.kind = Expr::Kind::Tuple;
        tuple.pos = value.pos;
        tuple.items.push_back(std::move(value));
        while (c.acceptPunct(",") && !c.atEnd()) tuple.items.push_back(c.parseExpr());
        value = std::move(tuple);
      }
      if (value.kind == Expr::Kind::Call && endsWith(value.text, "tree_unflatten") && !value.items.empty())
        value = Expr(value.items[0]);
      output.args.push_back(builder.toArg(value));
    }
    const Token& commentToken = c.peek();
    std::string comment = c.expectEnd("after the returned values");
    output.meta = parseMeta(comment, commentToken.pos);
    builder.define(std::move(output), returnToken.pos);
  }

  // --- str(graph) (form 3) -----------------------------------------------------------------

  void readStrGraph(std::size_t& line, GraphBuilder& builder) {
    const std::size_t graphLine = line;
    TokenCursor header = lexAt(line);
    header.expectName("graph");
    header.expectPunct("(", "after 'graph'");
    header.expectPunct(")", "in 'graph():'");
    header.expectPunct(":", "at the end of 'graph():'");
    header.expectEnd("after 'graph():'");
    while (true) {
      if (line >= source_.lineCount())
        source_.fail(linePos(graphLine, source_.indentOf(graphLine)), "graph() has no 'return' (the input ends first)");
      if (source_.isBlankOrComment(line)) { ++line; continue; }
      std::string_view s = source_.stripped(line);
      if (startsWith(s, "return") && (s.size() == 6 || s[6] == ' ' || s[6] == '(')) {
        TokenCursor c = lexAt(line);
        readReturn(c, builder);
        break;
      }
      if (s.front() != '%')
        source_.fail(linePos(line, source_.indentOf(line)),
                     "expected a node line '%name : ... = op[target=...](...)' or 'return' in graph()");
      TokenCursor c = lexAt(line);
      readStrNode(c, builder);
    }
    for (std::size_t l = line; l < source_.lineCount(); ++l) {
      if (source_.isBlank(l)) continue;
      if (source_.stripped(l).front() == '%') source_.fail(linePos(l, source_.indentOf(l)), "node line after 'return'");
      break;
    }
  }

  // %name : [num_users=1] = op[target=T](args = (...), kwargs = {...}), or %name := op[...](...)
  void readStrNode(TokenCursor& c, GraphBuilder& builder) {
    c.expectPunct("%", "at the start of a node line");
    const Token name = c.expectName("after '%'");
    Node node;
    node.name = name.text;
    if (!c.acceptPunct(":=")) {
      c.expectPunct(":", "after the node name");
      node.typeText = readStrNodeType(c);
      c.expectPunct("=", "after the node's type and user count");
    }
    const Token& opToken = c.expectName("(the node kind: placeholder, get_attr, call_function, call_module)");
    node.op = nodeOp(opToken, c);
    c.expectPunct("[", "after the node kind");
    if (!c.acceptName("target")) c.fail(c.peek(), "expected 'target=' after '['");
    c.expectPunct("=", "after 'target'");
    const Token targetToken = c.peek();
    std::string target = readBracketedText(c);
    if (!isDottedName(target) && !(startsWith(target, "<built-in function ") && isDottedName(normaliseTarget(target))))
      c.fail(targetToken, "malformed target '" + target + "' (expected a dotted name such as torch.ops.aten.add.Tensor)");
    std::string printed = target;
    if (node.op == NodeOp::Placeholder) {
      node.target = node.name;
      if (printed != node.name) builder.hints.printedPlaceholderTargets[node.name] = printed;
    } else {
      node.target = builder.targets(node.op == NodeOp::CallFunction ? normaliseTarget(target) : target);
    }
    if (c.acceptPunct("(")) readStrNodeArguments(c, node, builder);
    const Token& commentToken = c.peek();
    std::string comment = c.expectEnd("after the node");
    node.meta = parseMeta(comment, commentToken.pos);
    builder.define(std::move(node), name.pos);
  }

  // Between ':' and '=': `[num_users=1]`, maybe a type name and a quoted "f32[3][1]cpu".
  std::string readStrNodeType(TokenCursor& c) {
    std::string type;
    int depth = 0;
    while (!c.atEnd() && !(depth == 0 && c.peek().isPunct("="))) {
      const Token& t = c.next();
      if (t.isPunct("[") || t.isPunct("(") || t.isPunct("{")) ++depth;
      if (t.isPunct("]") || t.isPunct(")") || t.isPunct("}")) --depth;
      if (t.kind == TokenKind::String && depth == 0) {
        type = t.text;
        // Newer printouts add strides and device: keep the dtype and shape.
        if (std::size_t close = type.find(']'); close != std::string::npos) type = type.substr(0, close + 1);
        checkShape(type, t.pos);
      }
    }
    return type;
  }

  static bool isDottedName(std::string_view s) {
    bool atStart = true;
    for (char ch : s) {
      bool nameChar = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || (ch >= '0' && ch <= '9');
      if (ch == '.' && !atStart) { atStart = true; continue; }
      if (!nameChar || (atStart && ch >= '0' && ch <= '9')) return false;
      atStart = false;
    }
    return !s.empty() && !atStart;
  }

  static NodeOp nodeOp(const Token& t, const TokenCursor& c) {
    if (t.text == "placeholder") return NodeOp::Placeholder;
    if (t.text == "get_attr") return NodeOp::GetAttr;
    if (t.text == "call_function") return NodeOp::CallFunction;
    if (t.text == "call_module") return NodeOp::CallModule;
    c.fail(t, "unknown node kind '" + std::string(t.text) + "' (expected placeholder, get_attr, call_function or call_module)");
  }

  // The text up to the ']' that closes `[target=...`, as written.
  std::string readBracketedText(TokenCursor& c) {
    const Token first = c.peek();
    Token last = first;
    int depth = 0;
    while (!c.atEnd()) {
      const Token& t = c.peek();
      if (depth == 0 && t.isPunct("]")) break;
      if (t.isPunct("[") || t.isPunct("(") || t.isPunct("{")) ++depth;
      if (t.isPunct("]") || t.isPunct(")") || t.isPunct("}")) --depth;
      last = c.next();
    }
    if (first.isPunct("]") || first.kind == TokenKind::End || first.kind == TokenKind::Comment)
      c.fail(first, "empty target");
    c.expectPunct("]", "to close '[target=...'");
    return rawText(first, last);
  }

  void readStrNodeArguments(TokenCursor& c, Node& node, GraphBuilder& builder) {
    while (!c.acceptPunct(")")) {
      const Token& key = c.expectName("('args', 'kwargs' or 'default')");
      if (!c.acceptPunct("=")) c.expectPunct("=", "after '" + std::string(key.text) + "'");
      Expr value = c.parseExpr();
      if (key.text == "args") {
        if (value.kind != Expr::Kind::Tuple) c.fail(key, "'args' must be a tuple such as (%x, 1)");
        for (const Expr& a : value.items) node.args.push_back(builder.toArg(a));
      } else if (key.text == "kwargs") {
        if (value.kind != Expr::Kind::Dict) c.fail(key, "'kwargs' must be a dictionary such as {dim: 0}");
        for (std::size_t i = 0; i + 1 < value.items.size(); i += 2)
          node.kwargs.emplace_back(keywordName(value.items[i]), builder.toArg(value.items[i + 1]));
      } else if (key.text != "default") {
        c.fail(key, "unknown node field '" + std::string(key.text) + "' (expected args, kwargs or default)");
      }
      if (!c.peek().isPunct(")")) c.expectPunct(",", "between node fields");
    }
  }

  std::string keywordName(const Expr& key) const {
    if ((key.kind == Expr::Kind::Name && key.text.find('.') == std::string::npos) || key.kind == Expr::Kind::String)
      return key.text;
    source_.fail(key.pos, "a keyword argument's name must be a name or a string");
  }

  // --- Sections after the graph --------------------------------------------------------------

  // After the graph: blank lines and comments, the graph signature (with or without the
  // `Graph signature:` heading, in the text or the repr form), `Range constraints:`,
  // `Schemas:`, and for module code the module's further statements. Nothing else.
  void readSections(std::size_t line, bool moduleCode) {
    while (line < source_.lineCount()) {
      if (source_.isBlank(line)) { ++line; continue; }
      std::string_view s = source_.stripped(line);
      if (startsWith(s, "Graph signature:")) {
        readSignatureSection(line);
      } else if (s == "# inputs" || s == "# outputs") {
        noteSignature(line);
        readTextSignature(line);
      } else if (isBareReprSignature(s)) {
        noteSignature(line);
        TokenCursor c = lexAt(line);
        readReprSignature(c);
      } else if (s.front() == '#') {
        ++line;  // a comment
      } else if (startsWith(s, "Range constraints:")) {
        readRangeConstraints(line);
      } else if (startsWith(s, "Schemas:")) {
        readSchemas(line);
      } else if (moduleCode) {
        readModuleStatement(line);
      } else {
        source_.fail(linePos(line, source_.indentOf(line)),
                     "unexpected text after the program (expected 'Graph signature:', a signature "
                     "('# inputs' or 'ExportGraphSignature(...)'), 'Range constraints:' or 'Schemas:')");
      }
    }
  }

  static bool isBareReprSignature(std::string_view s) { return startsWith(s, "ExportGraphSignature("); }

  static bool isSectionHeading(std::string_view s) {
    // By the first character: every line of a signature is tested.
    switch (s.empty() ? '\0' : s.front()) {
      case 'G': return startsWith(s, "Graph signature:");
      case 'R': return startsWith(s, "Range constraints:");
      case 'S': return startsWith(s, "Schemas:");
      case 'E': return isBareReprSignature(s);
      default: return false;
    }
  }

  // `Range constraints: {s0: VR[2, 10]}`: kept as printed (it may span lines while a bracket is
  // open); wbcheck does not interpret it.
  void readRangeConstraints(std::size_t& line) {
    const std::size_t first = line;
    const Pos pos = linePos(line, source_.indentOf(line));
    if (rangeConstraintsFound_) source_.fail(pos, "a second 'Range constraints:' section");
    rangeConstraintsFound_ = true;
    TokenCursor c = lexAt(line);
    c.expectName("Range");
    c.expectName("constraints");
    c.expectPunct(":", "after 'Range constraints'");
    if (!c.peek().isPunct("{")) c.fail(c.peek(), "expected '{' after 'Range constraints:'");
    int depth = 0;
    do {
      const Token& t = c.next();
      if (t.isPunct("{") || t.isPunct("[") || t.isPunct("(")) ++depth;
      if (t.isPunct("}") || t.isPunct("]") || t.isPunct(")")) --depth;
    } while (depth > 0);
    c.expectEnd("after the range constraints");
    std::string text(trim(source_.stripped(first).substr(18)));
    for (std::size_t l = first + 1; l < line; ++l) text += "\n" + std::string(source_.line(l));
    program_.rangeConstraints = std::move(text);
  }

  void readSchemas(std::size_t& line) {
    ++line;
    while (line < source_.lineCount() && !source_.isBlank(line) && source_.indentOf(line) > 0 &&
           !isSectionHeading(source_.stripped(line))) {
      program_.schemas.emplace_back(source_.stripped(line));
      ++line;
    }
  }

  void noteSignature(std::size_t line) {
    if (signatureFound_) source_.fail(linePos(line, source_.indentOf(line)), "a second graph signature");
    signatureFound_ = true;
    signaturePos_ = linePos(line, source_.indentOf(line));
    // Room for the specs of a generated program, whose vectors would otherwise grow four or
    // five times each while its signature is read.
    inputs_.reserve(kExpectedSpecs);
    outputs_.reserve(kExpectedSpecs);
  }

  void readSignatureSection(std::size_t& line) {
    noteSignature(line);
    std::string_view rest = trim(source_.stripped(line).substr(16));
    if (!rest.empty()) {
      TokenCursor c = lexAt(line);
      c.next();  // Graph
      c.next();  // signature
      c.next();  // :
      readReprSignature(c);
      return;
    }
    ++line;
    std::size_t next = line;
    while (next < source_.lineCount() && source_.isBlank(next)) ++next;
    if (next < source_.lineCount() && startsWith(source_.stripped(next), "ExportGraphSignature")) {
      line = next;
      TokenCursor c = lexAt(line);
      readReprSignature(c);
      return;
    }
    readTextSignature(line);
  }

  // # inputs / name: KIND [target='t'] [persistent=True] / # outputs / name: KIND [target='t']
  void readTextSignature(std::size_t& line) {
    enum class Part { None, Inputs, Outputs } part = Part::None;
    while (line < source_.lineCount()) {
      // The indentation scanned once per line, for the blank test, the stripped text and the
      // spec.
      const std::size_t indent = source_.indentOf(line);
      if (indent == source_.line(line).size()) { ++line; continue; }
      std::string_view s = source_.line(line).substr(indent);
      while (isSpace(s.back())) s.remove_suffix(1);
      if (isSectionHeading(s)) return;
      if (s.front() == '#') {
        if (s == "# inputs") part = Part::Inputs;
        if (s == "# outputs") part = Part::Outputs;
        if (s == kInferredSignatureNote) program_.signatureInferred = true;
        ++line;
        continue;
      }
      if (part == Part::None)
        source_.fail(linePos(line, indent), "signature line before '# inputs' or '# outputs'");
      // Nearly every line: a spec in the form the writer prints, read without tokens.
      if (commonLines_ && readCommonSpecLine(source_, line, indent, specLine_)) {
        addSpec(part == Part::Inputs, specLine_.kind, specLine_.kindPos, std::string(specLine_.name),
                std::string(specLine_.target.value_or("")), specLine_.persistent, specLine_.pos);
        ++line;
        continue;
      }
      TokenCursor c = lexAt(line);
      readTextSpec(c, part == Part::Inputs);
    }
  }

  void readTextSpec(TokenCursor& c, bool isInput) {
    const Pos pos = c.peek().pos;
    std::string name;
    if (c.peek().kind == TokenKind::Name && c.peek(1).isPunct(":")) name = c.next().text;
    c.expectPunct(":", "after the name in a signature line 'name: KIND'");
    const Token& kind = c.expectName("(the spec kind) in a signature line");
    std::optional<std::string> target;
    std::optional<bool> persistent;
    while (!c.atEnd()) {
      const Token& key = c.expectName("('target' or 'persistent')");
      if (!c.acceptPunct("=")) c.expectPunct("=", "after '" + std::string(key.text) + "'");
      const Token& value = c.next();
      if (key.text == "target" && value.kind == TokenKind::String) target = value.text;
      else if (key.text == "target" && value.isName("None")) target.reset();
      else if (key.text == "persistent" && (value.isName("True") || value.isName("False"))) persistent = value.text == "True";
      else if (key.text == "persistent" && value.isName("None")) persistent.reset();
      else if (key.text == "target" || key.text == "persistent") c.fail(value, "bad value for '" + std::string(key.text) + "'");
      else c.fail(key, "unknown signature field '" + std::string(key.text) + "' (expected target or persistent)");
    }
    c.expectEnd("at the end of the signature line");
    addSpec(isInput, kind.text, kind.pos, std::move(name), target.value_or(""), persistent, pos);
  }

  void addSpec(bool isInput, std::string_view kindText, Pos kindPos, std::string name, std::string target,
               std::optional<bool> persistent, Pos pos) {
    std::string_view kindName = kindText;
    if (std::size_t dot = kindName.rfind('.'); dot != std::string_view::npos) kindName = kindName.substr(dot + 1);
    if (isInput) {
      auto k = inputKindFromString(kindName);
      if (!k)
        source_.fail(kindPos, "unknown input spec kind '" + std::string(kindName) +
                                   "' (expected USER_INPUT, PARAMETER, BUFFER, CONSTANT_TENSOR, CUSTOM_OBJ or TOKEN)");
      inputs_.push_back({InputSpec{*k, std::move(name), std::move(target), persistent}, pos});
    } else {
      auto k = outputKindFromString(kindName);
      if (!k)
        source_.fail(kindPos, "unknown output spec kind '" + std::string(kindName) +
                                   "' (expected USER_OUTPUT, LOSS_OUTPUT, BUFFER_MUTATION, GRADIENT_TO_PARAMETER, "
                                   "GRADIENT_TO_USER_INPUT, USER_INPUT_MUTATION or TOKEN)");
      outputs_.push_back({OutputSpec{*k, std::move(name), std::move(target)}, pos});
    }
  }

  // ExportGraphSignature(input_specs=[InputSpec(kind=<InputKind.BUFFER: 3>,
  //   arg=TensorArgument(name='b_x'), target='x', persistent=True), ...], output_specs=[...])
  // Every field is read: an unknown one is an error, not a field to skip.
  void readReprSignature(TokenCursor& c) {
    Expr e = c.parseExpr();
    c.expectEnd("after the graph signature");
    if (e.kind != Expr::Kind::Call || !endsWith(e.text, "ExportGraphSignature"))
      source_.fail(e.pos, "expected 'ExportGraphSignature(input_specs=[...], output_specs=[...])'");
    if (!e.items.empty()) source_.fail(e.items[0].pos, "ExportGraphSignature takes keyword fields only (input_specs=..., output_specs=...)");
    bool seen[2] = {false, false};
    for (std::size_t i = 0; i < e.keywordNames.size(); ++i) {
      const Expr& list = e.keywordValues[i];
      bool isInput = e.keywordNames[i] == "input_specs";
      if (!isInput && e.keywordNames[i] != "output_specs")
        source_.fail(list.pos, "unknown field '" + e.keywordNames[i] + "' of ExportGraphSignature (expected input_specs or output_specs)");
      if (seen[isInput]) source_.fail(list.pos, "a second '" + e.keywordNames[i] + "' field");
      seen[isInput] = true;
      if (list.kind != Expr::Kind::List) source_.fail(list.pos, "expected a list of specs");
      for (const Expr& spec : list.items) readReprSpec(spec, isInput);
    }
    if (!seen[1]) source_.fail(e.pos, "ExportGraphSignature without input_specs=[...]");
    if (!seen[0]) source_.fail(e.pos, "ExportGraphSignature without output_specs=[...]");
  }

  static const Expr* keyword(const Expr& call, std::string_view name) {
    for (std::size_t i = 0; i < call.keywordNames.size(); ++i)
      if (call.keywordNames[i] == name) return &call.keywordValues[i];
    return nullptr;
  }

  // Fails unless every field of `call` is one of `allowed` (and none is positional or repeated).
  void checkFields(const Expr& call, std::initializer_list<std::string_view> allowed) const {
    if (!call.items.empty()) source_.fail(call.items[0].pos, "positional field in " + call.text + "(...): expected name=value");
    for (std::size_t i = 0; i < call.keywordNames.size(); ++i) {
      const std::string& name = call.keywordNames[i];
      bool known = false;
      for (std::string_view a : allowed) known = known || name == a;
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      if (!known) source_.fail(call.keywordValues[i].pos, "unknown field '" + name + "' of " + call.text + " (expected " + list + ")");
      for (std::size_t j = 0; j < i; ++j)
        if (call.keywordNames[j] == name) source_.fail(call.keywordValues[i].pos, "field '" + name + "' given twice");
    }
  }

  void readReprSpec(const Expr& spec, bool isInput) {
    const char* expected = isInput ? "InputSpec" : "OutputSpec";
    if (spec.kind != Expr::Kind::Call || !endsWith(spec.text, expected))
      source_.fail(spec.pos, std::string("expected ") + expected + "(kind=..., arg=..., target=...)");
    if (isInput) checkFields(spec, {"kind", "arg", "target", "persistent"});
    else checkFields(spec, {"kind", "arg", "target"});
    const Expr* kind = keyword(spec, "kind");
    const Expr* arg = keyword(spec, "arg");
    if (!kind || kind->kind != Expr::Kind::Enum)
      source_.fail(kind ? kind->pos : spec.pos, std::string(expected) + " without kind=<" + (isInput ? "InputKind" : "OutputKind") + ".X: n>");
    if (!arg || arg->kind != Expr::Kind::Call || !endsWith(arg->text, "Argument"))
      source_.fail(arg ? arg->pos : spec.pos, std::string(expected) + " without arg=...Argument(name=...)");
    checkFields(*arg, {"name", "value", "class_fqn", "fake_val"});
    std::string name;
    if (const Expr* n = keyword(*arg, "name")) {
      if (n->kind != Expr::Kind::String) source_.fail(n->pos, "the argument's name must be a string such as 'x'");
      name = n->text;
    }
    std::string target;
    if (const Expr* t = keyword(spec, "target"); t && t->kind != Expr::Kind::None) {
      if (t->kind != Expr::Kind::String) source_.fail(t->pos, "target must be a string or None");
      target = t->text;
    }
    std::optional<bool> persistent;
    if (const Expr* p = keyword(spec, "persistent"); p && p->kind != Expr::Kind::None) {
      if (p->kind != Expr::Kind::Bool) source_.fail(p->pos, "persistent must be True, False or None");
      persistent = p->boolean;
    }
    addSpec(isInput, kind->text, kind->pos, std::move(name), std::move(target), persistent, spec.pos);
  }

  // An explicit signature must match the graph: every input spec names a placeholder, no
  // placeholder twice, and none is left out; every output spec names a node, one per returned
  // value. Each error points at the spec (or, for a spec that is missing, at the signature).
  // The order and the targets are validate()'s to check.
  void checkSignature(const GraphBuilder& builder) {
    const Graph& graph = program_.graph;
    constexpr std::size_t kUnclaimed = static_cast<std::size_t>(-1);
    std::vector<std::size_t> claimedBy(graph.nodes.size(), kUnclaimed);
    for (std::size_t s = 0; s < inputs_.size(); ++s) {
      const auto& [spec, pos] = inputs_[s];
      const std::optional<std::size_t> node = builder.indexOf(spec.name);
      if (!node || !graph.nodes[*node].isPlaceholder())
        source_.fail(pos, "signature input '" + spec.name + "' names no placeholder of forward()");
      std::size_t& claimed = claimedBy[*node];
      if (claimed != kUnclaimed)
        source_.fail(pos, "signature input '" + spec.name + "' names the same placeholder as the input spec at " +
                              positionText(inputs_[claimed].pos));
      claimed = s;
    }
    for (std::size_t i = 0; i < graph.nodes.size(); ++i)
      if (graph.nodes[i].isPlaceholder() && claimedBy[i] == kUnclaimed)
        source_.fail(signaturePos_, "the graph signature has no input spec for placeholder '" + graph.nodes[i].name + "'");
    for (const auto& [spec, pos] : outputs_)
      if (!spec.name.empty() && !builder.indexOf(spec.name))
        source_.fail(pos, "signature output '" + spec.name + "' names no node of the graph");
    if (!graph.nodes.empty() && graph.nodes.back().isOutput() && graph.nodes.back().args.size() == 1) {
      const std::size_t returned = graph.returnedArgs().size();
      if (outputs_.size() > returned)
        source_.fail(outputs_[returned].pos, "signature output '" + outputs_[returned].spec.name + "' is spec #" +
                                                 std::to_string(returned) + " but the graph returns " +
                                                 std::to_string(returned) + " value(s)");
      if (outputs_.size() < returned)
        source_.fail(signaturePos_, "the graph signature has " + std::to_string(outputs_.size()) +
                                        " output spec(s) but the graph returns " + std::to_string(returned) + " value(s)");
    }
    // The specs are read for this program alone: moved, not copied.
    program_.signature.inputs.reserve(inputs_.size());
    program_.signature.outputs.reserve(outputs_.size());
    for (auto& located : inputs_) program_.signature.inputs.push_back(std::move(located.spec));
    for (auto& located : outputs_) program_.signature.outputs.push_back(std::move(located.spec));
  }

  const Source& source_;
  const ReadLimits& limits_;
  Program program_;
  std::size_t nodeCount_ = 0;
  bool signatureFound_ = false;
  bool rangeConstraintsFound_ = false;
  Pos signaturePos_;
  std::vector<Located<InputSpec>> inputs_;
  std::vector<Located<OutputSpec>> outputs_;
  bool commonLines_;
  NodeLineScratch nodeLineScratch_;
  SpecLine specLine_;
};

}  // namespace
}  // namespace text

Result<Program> readProgram(std::string_view input, std::string_view fileName, const ReadLimits& limits) {
  return readProgram(input, fileName, limits, nullptr);
}

Result<Program> readProgram(std::string_view input, std::string_view fileName, const ReadLimits& limits,
                            std::vector<SourceLocation>* nodeLocations) {
  return text::readProgramWith(input, fileName, limits, nodeLocations, true);
}

Result<Program> text::readProgramWith(std::string_view input, std::string_view fileName, const ReadLimits& limits,
                                      std::vector<SourceLocation>* nodeLocations, bool commonLines) {
  try {
    if (input.size() > limits.maxBytes)
      return Result<Program>::failure(Diagnostic{std::string(fileName), 1, 1,
                                                 "input of " + std::to_string(input.size()) + " bytes exceeds the limit of " +
                                                     std::to_string(limits.maxBytes),
                                                 ""});
    if (input.substr(0, 3) == "\xEF\xBB\xBF") input.remove_prefix(3);  // UTF-8 byte order mark
    text::Source source(input, fileName);
    text::rejectBinary(input, source);
    return Result<Program>::success(text::ProgramReader(source, limits, commonLines).read(nodeLocations));
  } catch (text::ReadError& error) {
    return Result<Program>::failure(std::move(error.diagnostic));
  } catch (const std::bad_alloc&) {
    return Result<Program>::failure(Diagnostic{std::string(fileName), 0, 0, "out of memory while reading", ""});
  } catch (const std::exception& e) {
    return Result<Program>::failure(Diagnostic{std::string(fileName), 0, 0, std::string("internal error: ") + e.what(), ""});
  }
}

}  // namespace wb
