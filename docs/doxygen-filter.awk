# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Doxygen INPUT_FILTER for weft's public headers: turns their plain `//`
# comments into Doxygen comments, so the reference shows what the headers say
# without the headers carrying Doxygen markup (docs/Doxyfile.in).
#
#   awk -f docs/doxygen-filter.awk runtime/include/weft/runtime/executor.hpp
#
# - The comment that opens a file (its contract and example) becomes the
#   file's documentation, as written.
# - A block of `//` lines directly above a declaration at namespace or class
#   scope documents it: prose with Doxygen's special characters escaped (so
#   "<stdin>" or "\u001b" print as written), lines indented further (examples,
#   aligned lists) as unhighlighted code.
# - `member;  // text` documents the member (`///<`), as do comment lines
#   aligned under such a text.
# Comments inside function bodies, section rulers (`// ---- x ----`) and
# blocks followed by a blank line stay plain comments. Line numbers are kept.

function escape(text,   out) {
  gsub(/[\\@<>&#%$]/, "\\\\&", text)
  # "::x" after anything but a name (as in "T<U>::x") is an explicit link
  # request to Doxygen; \:: prints the colons.
  out = ""
  if (substr(text, 1, 2) == "::") {
    out = "\\::"
    text = substr(text, 3)
  }
  while (match(text, /[^A-Za-z0-9_:]::/)) {
    out = out substr(text, 1, RSTART) "\\::"
    text = substr(text, RSTART + 3)
  }
  return out text
}

# The text after `//` on a comment line, and the column of its `//`.
function comment_text(line) {
  sub(/^[ \t]*\/\/ ?/, "", line)
  return line
}

function comment_column(line) { return index(line, "//") }

function is_comment(line) { return line ~ /^[ \t]*\/\// }

# Every enclosing scope is a namespace, class, struct, union or enum, so a
# comment here is about a declaration, not a step of a function body.
function at_type_scope(   i) {
  for (i = 1; i <= depth; ++i)
    if (!type_scope[i]) return 0
  return 1
}

# The code of a line without its trailing comment and string literals, for
# counting braces.
function code_part(line) {
  gsub(/"([^"\\]|\\.)*"/, "\"\"", line)
  gsub(/'([^'\\]|\\.)*'/, "''", line)
  sub(/\/\/.*$/, "", line)
  return line
}

function track_scopes(line,   code, c, i, is_type) {
  code = code_part(line)
  is_type = code ~ /(^|[^A-Za-z0-9_])(namespace|class|struct|union|enum)([^A-Za-z0-9_]|$)/ && code !~ /\(/
  is_type = is_type || code ~ /extern "C"/
  for (i = 1; i <= length(code); ++i) {
    c = substr(code, i, 1)
    if (c == "{") {
      type_scope[++depth] = is_type
    } else if (c == "}" && depth > 0) {
      --depth
    }
  }
}

# A line a comment block above it may document.
function documentable(line) {
  if (line ~ /^[ \t]*$/) return 0
  if (line ~ /^[ \t]*#/ && line !~ /^[ \t]*#[ \t]*define[ \t]/) return 0
  if (line ~ /^[ \t]*(}|namespace[ \t]|public:|protected:|private:|static_assert)/) return 0
  return at_type_scope()
}

function flush_plain(   i) {
  for (i = 1; i <= pending; ++i) print pending_line[i]
  pending = 0
}

# The file's opening comment: the file's page shows it as written. The
# markers share lines with the text, so line numbers stay those of the header
# (and \verbatim would keep the `///` markers in its text).
function flush_file_doc(   i, out) {
  for (i = 1; i <= pending; ++i) {
    out = "/// " (i == 1 ? "\\code{.unparsed} " : "") comment_text(pending_line[i])
    if (i == pending) out = out " \\endcode \\file"
    print out
  }
  pending = 0
}

# Prose escaped; lines indented by two spaces or more (examples, aligned
# lists) as unhighlighted code. One output line per input line.
function flush_doc(indent,   i, text, indented, in_code, out) {
  in_code = 0
  for (i = 1; i <= pending; ++i) {
    text = comment_text(pending_line[i])
    indented = text ~ /^  / || (in_code && text == "")
    out = indent "///"
    if (indented && !in_code) {
      out = out " \\code{.unparsed}"
      in_code = 1
    } else if (!indented && in_code) {
      out = out " \\endcode"
      in_code = 0
    }
    out = out " " (in_code ? text : escape(text))
    if (in_code && i == pending) out = out " \\endcode"
    print out
  }
  pending = 0
}

function is_ruler(line) { return comment_text(line) ~ /^-+ / }

BEGIN {
  depth = 0
  pending = 0
  seen_code = 0
  trailing_column = 0
}

{
  line = $0
  # The licence line that opens every file is not documentation.
  if (line ~ /^\/\/ SPDX-License-Identifier:/) {
    print ""
    next
  }
  if (is_comment(line)) {
    # Aligned under a member's trailing comment: more of that text.
    if (trailing_column > 0 && comment_column(line) == trailing_column && pending == 0) {
      prefix = substr(line, 1, trailing_column - 1)
      print prefix "///< " escape(comment_text(line))
      next
    }
    trailing_column = 0
    if (is_ruler(line)) {
      flush_plain()
      print line
      next
    }
    pending_line[++pending] = line
    next
  }
  trailing_column = 0
  if (!seen_code && pending > 0) {
    flush_file_doc()
  } else if (pending > 0) {
    if (documentable(line)) {
      match(pending_line[1], /^[ \t]*/)
      flush_doc(substr(pending_line[1], 1, RLENGTH))
    } else {
      flush_plain()
    }
  }
  if (line !~ /^[ \t]*$/) seen_code = 1

  # `member;  // text` or `enumerator,  // text` at type scope.
  if (at_type_scope() && match(line, /[;,][ \t]+\/\/ /)) {
    code = substr(line, 1, RSTART)
    quotes = code
    if (gsub(/"/, "", quotes) % 2 == 0) {
      trailing_column = RSTART + RLENGTH - 3
      text = substr(line, RSTART + RLENGTH)
      line = code substr(line, RSTART + 1, RLENGTH - 4) "///< " escape(text)
    }
  }
  print line
  track_scopes($0)
}

END { flush_plain() }
