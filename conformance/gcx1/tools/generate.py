#!/usr/bin/env python3
"""Writes the conformance/gcx1 fixtures: `python3 conformance/gcx1/tools/generate.py`.

Every expected text, value and error position below is written by hand from the GCX1 spec,
the Go reference's behaviour and docs/gcx1.md; nothing is computed by the codec under test.
The script only saves typing JSON escapes by hand."""
import json, os, re, shutil, base64, sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# Regenerate from scratch: remove the fixture files (not this script).
for dirpath, _, files in os.walk(ROOT):
    for f in files:
        if f.endswith(".json"):
            os.remove(os.path.join(dirpath, f))
COUNT = 0

def N(lexeme):
    """A JSON number written with exactly this lexeme."""
    return "@@NUM:" + lexeme + "@@"

def write(path, name, description, operation, **fields):
    global COUNT
    doc = {"name": name, "description": description, "operation": operation}
    for k, v in fields.items():
        key = {"expected_error": "expectedError", "input_base64": "inputBase64"}.get(k, k)
        doc[key] = v
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    text = re.sub(r'"@@NUM:([^@]*)@@"', r'\1', text)
    full = os.path.join(ROOT, path + ".json")
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    COUNT += 1

def sec(tool, fields, rows=(), meta=None):
    s = {"tool": tool, "fields": list(fields), "rows": list(rows)}
    if meta:
        s["meta"] = meta
    return s

def dsec(tool, fields, rows=(), meta=None):
    s = {"tool": tool, "fields": list(fields), "rows": [list(r) for r in rows]}
    if meta:
        s["meta"] = meta
    return s

def pos(line, column):
    return {"line": line, "column": column}

# ---------------------------------------------------------------- header (encode)
write("header/001_fields_then_sorted_meta", "fields_then_sorted_meta",
      "fields= follows tool=, then meta in byte-wise key order: upper case, then _, then lower case",
      "encode", sections=[sec("x", ["a"], meta={"z": "1", "a": "2", "rows": "3", "_x": "5", "Total": "4"})],
      expected="GCX1 tool=x fields=a Total=4 _x=5 a=2 rows=3 z=1\n")
write("header/002_spec_example", "spec_example",
      "the spec's search_symbols header example",
      "encode", sections=[sec("search_symbols", ["id", "kind", "name", "path", "line", "sig"],
                              meta={"total": "7", "truncated": "false", "rows": "3"})],
      expected="GCX1 tool=search_symbols fields=id,kind,name,path,line,sig rows=3 total=7 truncated=false\n")
write("header/003_meta_value_escapes", "meta_value_escapes",
      "meta values use the row escapes for TAB, LF and backslash",
      "encode", sections=[sec("t", ["a"], meta={"msg": "a\tb\nc\\d"})],
      expected="GCX1 tool=t fields=a msg=a\\tb\\nc\\\\d\n")
write("header/004_meta_value_equals_and_commas", "meta_value_equals_and_commas",
      "`=` and `,` are fine in meta values: decoders split a token at its first `=`",
      "encode", sections=[sec("t", ["a"], meta={"weights": "a=0.1,b=0.2"})],
      expected="GCX1 tool=t fields=a weights=a=0.1,b=0.2\n")
write("header/005_field_names_escaped_twice", "field_names_escaped_twice",
      "decoders unescape the fields= value and then each name again, so names are escaped twice",
      "encode", sections=[sec("t", ["a\\b", "c"])],
      expected="GCX1 tool=t fields=a\\\\\\\\b,c\n")
write("header/006_dotted_sub_section_tool", "dotted_sub_section_tool",
      "a dot-suffixed sub-section name", "encode",
      sections=[sec("get_callers.edges", ["from", "to"], meta={"count": "0"})],
      expected="GCX1 tool=get_callers.edges fields=from,to count=0\n")
write("header/007_empty_field_name_is_representable", "empty_field_name",
      "an empty field name between others survives: fields=a,,b", "encode",
      sections=[sec("t", ["a", "", "b"], rows=[["1", "2", "3"]])],
      expected="GCX1 tool=t fields=a,,b\n1\t2\t3\n")

herr = [
    ("001_space_in_tool", "a tool name with a space would be split by every decoder",
     [sec("my tool", ["a"])], "invalid_header", pos(1, 13)),
    ("002_comma_in_field", "`,` separates field names", [sec("t", ["a,b"])], "invalid_header", pos(1, 21)),
    ("003_space_in_field", "a field name with a space would be split", [sec("t", ["ok", "b c"])], "invalid_header", pos(1, 24)),
    ("004_empty_field_list", "at least one field is required", [sec("t", [])], "empty_field_list", pos(1, 1)),
    ("005_duplicate_field", "decoders map rows by field name; a duplicate would lose a column",
     [sec("t", ["a", "b", "a"])], "duplicate_field", None),
    ("006_meta_key_tool", "a meta key `tool` would override the real tool in decoders",
     [sec("t", ["a"], meta={"tool": "other"})], "reserved_meta_key", None),
    ("007_meta_key_fields", "a meta key `fields` would override the real fields in decoders",
     [sec("t", ["a"], meta={"fields": "b"})], "reserved_meta_key", None),
    ("008_equals_in_meta_key", "`=` separates key from value", [sec("t", ["a"], meta={"k=v": "x"})], "invalid_header", None),
    ("009_space_in_meta_value", "the header is split on spaces (the reference server drops such pairs silently)",
     [sec("t", ["a"], meta={"caveat": "two words"})], "invalid_header", pos(1, 32)),
    ("010_empty_tool", "decoders reject an empty tool", [sec("", ["a"])], "invalid_header", pos(1, 11)),
    ("011_trailing_nbsp_in_meta_value", "decoders trim Unicode whitespace off the header line",
     [sec("t", ["a"], meta={"k": "v\u00a0"})], "invalid_header", None),
    ("012_cr_in_meta_value", "CR cannot be carried in a header", [sec("t", ["a"], meta={"k": "a\rb"})], "invalid_header", None),
    ("013_tab_in_field_name", "field names are identifiers: no whitespace", [sec("t", ["a\tb"])], "invalid_header", None),
]
for n, desc, sections, code, p in herr:
    kw = dict(sections=sections, expected_error=code)
    if p:
        kw["position"] = p
    write("header/err_" + n, n[4:], desc, "encode-error", **kw)

# ---------------------------------------------------------------- rows (encode)
write("rows/001_pad_missing_trailing_cells", "pad_missing_trailing_cells",
      "fewer values than fields: the writer pads with empty cells", "encode",
      sections=[sec("t", ["a", "b", "c"], rows=[["x"]])], expected="GCX1 tool=t fields=a,b,c\nx\t\t\n")
write("rows/002_scalar_stringification", "scalar_stringification",
      "bool true/false, integers in decimal over the full u64/i64 range, null empty", "encode",
      sections=[sec("t", list("abcdefg"), rows=[[True, False, 42, -7, N("18446744073709551615"), N("-9223372036854775808"), None]])],
      expected="GCX1 tool=t fields=a,b,c,d,e,f,g\ntrue\tfalse\t42\t-7\t18446744073709551615\t-9223372036854775808\t\n")
write("rows/003_escape_alphabet", "escape_alphabet", "TAB, LF and backslash escape as \\t, \\n, \\\\",
      "encode", sections=[sec("t", ["a", "b"], rows=[["a\tb\nc\\d", "plain, with commas (x, y)"]])],
      expected="GCX1 tool=t fields=a,b\na\\tb\\nc\\\\d\tplain, with commas (x, y)\n")
write("rows/004_crlf_becomes_lf", "crlf_becomes_lf", "CR before LF is stripped on encode, so CRLF text arrives as LF",
      "encode", sections=[sec("t", ["src", "n"], rows=[["line1\r\nline2\r\n", 1]])],
      expected="GCX1 tool=t fields=src,n\nline1\\nline2\\n\t1\n")
write("rows/020_cr_run_before_lf_dropped", "cr_run_before_lf_dropped",
      "every CR directly before an LF is dropped (CR CR LF becomes LF, so a second round changes nothing); other CRs stay",
      "encode", sections=[sec("t", ["a", "b"], rows=[["a\r\r\nb", "c\r\rd"]])],
      expected="GCX1 tool=t fields=a,b\na\\nb\tc\\\r\\\rd\n")
write("rows/005_lone_cr_kept_behind_backslash", "lone_cr_kept",
      "a CR not followed by LF is kept as backslash + CR (the reference deletes it); \\x decodes to x",
      "encode", sections=[sec("t", ["a", "b"], rows=[["50%\r100%", "x"]])],
      expected="GCX1 tool=t fields=a,b\n50%\\\r100%\tx\n")
write("rows/006_first_cell_hash_escaped", "first_cell_hash_escaped",
      "a first cell starting with # would read as a comment (the reference drops the row); a backslash protects it",
      "encode", sections=[sec("t", ["id", "kind"], rows=[["#tag", "x"]])],
      expected="GCX1 tool=t fields=id,kind\n\\#tag\tx\n")
write("rows/007_first_cell_gcx1_escaped", "first_cell_gcx1_escaped",
      "a first cell starting with GCX would read as a header; a backslash protects it",
      "encode", sections=[sec("t", ["id", "kind"], rows=[["GCX1Foo", "type"], ["GCX1 tool=x fields=y", "z"]])],
      expected="GCX1 tool=t fields=id,kind\n\\GCX1Foo\ttype\n\\GCX1 tool=x fields=y\tz\n")
write("rows/008_first_cell_gcx2_escaped", "first_cell_gcx2_escaped",
      "any first cell starting with GCX is protected, so no row can pass for another version's header",
      "encode", sections=[sec("t", ["a"], rows=[["GCX2 tool=y"]])], expected="GCX1 tool=t fields=a\n\\GCX2 tool=y\n")
write("rows/009_hash_in_later_cell_untouched", "hash_in_later_cell_untouched",
      "only the first cell of a row can start a comment", "encode",
      sections=[sec("t", ["a", "b"], rows=[["a", "#b"], ["", "GCX1"]])],
      expected="GCX1 tool=t fields=a,b\na\t#b\n\tGCX1\n")
write("rows/010_unicode_passthrough", "unicode_passthrough", "non-ASCII text passes through unescaped",
      "encode", sections=[sec("t", ["a", "b"], rows=[["héllo ✓", "日本語 \u2028"]])],
      expected="GCX1 tool=t fields=a,b\nhéllo ✓\t日本語 \u2028\n")
write("rows/011_empty_cells_in_wide_rows", "empty_cells_in_wide_rows",
      "empty cells are fine when a row has more than one column", "encode",
      sections=[sec("t", ["a", "b"], rows=[["", ""], [None, None]])], expected="GCX1 tool=t fields=a,b\n\t\n\t\n")
write("rows/012_comment_line", "comment_line", "write_comment gives `# ` and the text", "encode",
      sections=[sec("t", ["a"], rows=[{"comment": "2 matches"}, ["x"], ["y"]])],
      expected="GCX1 tool=t fields=a\n# 2 matches\nx\ny\n")
write("rows/013_comment_line_breaks_become_spaces", "comment_line_breaks",
      "LF in a comment becomes a space, as the reference encoder does; TAB stays", "encode",
      sections=[sec("t", ["a"], rows=[{"comment": "two\nlines\twith tab"}])],
      expected="GCX1 tool=t fields=a\n# two lines\twith tab\n")
write("rows/014_multi_section", "multi_section", "sections follow each other, each with its own header",
      "encode", sections=[sec("get_callers.nodes", ["id", "line"], rows=[["f", 3]], meta={"total": "1", "truncated": "false"}),
                          sec("get_callers.edges", ["from", "to"], rows=[["f", "g"]], meta={"count": "1"})],
      expected="GCX1 tool=get_callers.nodes fields=id,line total=1 truncated=false\nf\t3\n"
               "GCX1 tool=get_callers.edges fields=from,to count=1\nf\tg\n")
write("rows/015_floats_go_shortest_g", "floats_go_shortest_g",
      "floats as Go's FormatFloat(x, 'g', -1, 64): exponent when it is below -4 or at least 6", "encode",
      sections=[sec("t", list("abcdefghij"), rows=[[N("0.5"), N("1.0"), N("100000.0"), N("1e6"), N("1e-5"), N("0.0001"),
                                                   N("-0.0"), N("1e21"), N("123456789.0"), N("1.2345678901234567e20")]])],
      expected="GCX1 tool=t fields=a,b,c,d,e,f,g,h,i,j\n0.5\t1\t100000\t1e+06\t1e-05\t0.0001\t-0\t1e+21\t1.23456789e+08\t1.2345678901234567e+20\n")
write("rows/016_float32_shortest", "float32_shortest", "float32 values use the shortest float32 digits",
      "encode", sections=[sec("t", ["a", "b"], rows=[[{"f32": N("0.1")}, {"f32": N("16777216.0")}]])],
      expected="GCX1 tool=t fields=a,b\n0.1\t1.6777216e+07\n")
write("rows/017_trailing_backslash", "trailing_backslash", "a trailing backslash is escaped", "encode",
      sections=[sec("t", ["a", "b"], rows=[["end\\", "x"]])], expected="GCX1 tool=t fields=a,b\nend\\\\\tx\n")
write("rows/018_single_column_rows", "single_column_rows", "one-column rows with values", "encode",
      sections=[sec("get_editing_context.tests", ["path"], rows=[["a_test.go"], ["b_test.go"]])],
      expected="GCX1 tool=get_editing_context.tests fields=path\na_test.go\nb_test.go\n")
write("rows/019_empty_section", "empty_section", "a header with no rows", "encode",
      sections=[sec("t", ["a"]), sec("u", ["b"], rows=[["x"]])], expected="GCX1 tool=t fields=a\nGCX1 tool=u fields=b\nx\n")

rerr = [
    ("001_too_many_values", "more values than fields", [sec("t", ["a"], rows=[["x", "y"]])], "too_many_values", pos(2, 2)),
    ("002_empty_single_column_row", "an empty one-column row would be a blank line, which decoders skip (the reference loses it)",
     [sec("t", ["a"], rows=[[""]])], "empty_row", pos(2, 1)),
    ("003_null_single_column_row", "null is an empty cell, so the same as an empty string",
     [sec("t", ["a"], rows=[["x"], [None]])], "empty_row", pos(3, 1)),
    ("004_nan", "NaN has no GCX1 form (the reference writes NaN)", [sec("t", ["a", "b"], rows=[["x", {"f64": "NaN"}]])], "non_finite_float", pos(2, 3)),
    ("005_infinity", "infinities have no GCX1 form (the reference writes +Inf)", [sec("t", ["a"], rows=[[{"f64": "+Inf"}]])], "non_finite_float", pos(2, 1)),
    ("006_float32_infinity", "float32 infinities too", [sec("t", ["a"], rows=[[{"f32": "-Inf"}]])], "non_finite_float", None),
]
for n, desc, sections, code, p in rerr:
    kw = dict(sections=sections, expected_error=code)
    if p:
        kw["position"] = p
    write("rows/err_" + n, n[4:], desc, "encode-error", **kw)

# ---------------------------------------------------------------- floats (format-float)
floats = [
    ("0.5", "0.5"), ("1.0", "1"), ("0", "0"), ("-0.0", "-0"), ("100000.0", "100000"), ("123456.0", "123456"),
    ("999999.0", "999999"), ("1e6", "1e+06"), ("1234567.0", "1.234567e+06"), ("123456789.0", "1.23456789e+08"),
    ("1e20", "1e+20"), ("1e21", "1e+21"), ("1.2345678901234567e20", "1.2345678901234567e+20"),
    ("0.0001", "0.0001"), ("0.00012345", "0.00012345"), ("0.00001", "1e-05"), ("1e-7", "1e-07"),
    ("0.30000000000000004", "0.30000000000000004"), ("1e100", "1e+100"), ("1e-100", "1e-100"),
    ("5e-324", "5e-324"), ("1.7976931348623157e308", "1.7976931348623157e+308"), ("-2.5e-10", "-2.5e-10"),
    ("9007199254740993", "9.007199254740992e+15"),
]
for i, (lex, out) in enumerate(floats, 1):
    write(f"floats/{i:03}_{re.sub('[^a-z0-9]+', '_', lex.lower()).strip('_')}", "float_" + lex,
          f"Go's shortest %g of {lex} is {out}", "format-float", input=N(lex), expected=out)
for j, (lex, out) in enumerate([("0.1", "0.1"), ("16777216.0", "1.6777216e+07"), ("3.4028235e38", "3.4028235e+38"), ("1e-45", "1e-45")], len(floats) + 1):
    write(f"floats/{j:03}_f32_{re.sub('[^a-z0-9]+', '_', lex.lower()).strip('_')}", "float32_" + lex,
          f"Go's shortest %g of float32 {lex} is {out}", "format-float", input=N(lex), bits=32, expected=out)

# ---------------------------------------------------------------- decode
write("decode/001_spec_example", "spec_example", "a search_symbols payload with its comment",
      "decode", input="GCX1 tool=search_symbols fields=id,kind,name,path,line,sig total=7 truncated=false\n# 2 result(s)\n"
                      "a.go::F\tfunction\tF\ta.go\t10\tfunc F()\nb.go::G\tmethod\tG\tb.go\t20\t\n",
      expected=[dsec("search_symbols", ["id", "kind", "name", "path", "line", "sig"],
                     [["a.go::F", "function", "F", "a.go", "10", "func F()"], ["b.go::G", "method", "G", "b.go", "20", ""]],
                     meta={"total": "7", "truncated": "false"})])
write("decode/002_fewer_cells_padded", "fewer_cells_padded", "missing trailing cells read as empty",
      "decode", input="GCX1 tool=t fields=a,b,c\nx\nx\ty\n", expected=[dsec("t", ["a", "b", "c"], [["x", "", ""], ["x", "y", ""]])])
write("decode/003_blank_lines_and_comments_skipped", "blank_lines_and_comments_skipped",
      "blank lines and # lines inside a section carry no data", "decode",
      input="GCX1 tool=t fields=a,b\n\n# note\nx\ty\n\n#\n", expected=[dsec("t", ["a", "b"], [["x", "y"]])])
write("decode/004_crlf_line_endings", "crlf_line_endings", "CRLF line endings are read as LF (as gcx-go does)",
      "decode", input="GCX1 tool=t fields=a,b\r\nx\ty\r\n", expected=[dsec("t", ["a", "b"], [["x", "y"]])])
write("decode/005_no_final_newline", "no_final_newline", "the last line may lack its LF",
      "decode", input="GCX1 tool=t fields=a\nx", expected=[dsec("t", ["a"], [["x"]])])
write("decode/006_unknown_escapes_decode_to_the_character", "unknown_escapes",
      "any other \\x decodes to x: \\r is r, \\# is #, \\é is é", "decode",
      input="GCX1 tool=t fields=a\n\\r\\x\\#\\é\\t\\n\\\\\n", expected=[dsec("t", ["a"], [["rx#é\t\n\\"]])])
write("decode/007_trailing_lone_backslash_stays", "trailing_lone_backslash",
      "a lone backslash at the end of a cell stays a backslash, as in the reference", "decode",
      input="GCX1 tool=t fields=a,b\nend\\\tx\\\n", expected=[dsec("t", ["a", "b"], [["end\\", "x\\"]])])
write("decode/008_header_keys_any_order_last_wins", "header_keys_any_order_last_wins",
      "header keys may come in any order; the last duplicate wins", "decode",
      input="GCX1 z=1 fields=a tool=t z=2 tool=u\nx\n", expected=[dsec("u", ["a"], [["x"]], meta={"z": "2"})])
write("decode/009_empty_section_then_section", "empty_section_then_section", "a header with no rows, then another section",
      "decode", input="GCX1 tool=a fields=x\n\nGCX1 tool=b fields=y\n1\n",
      expected=[dsec("a", ["x"], []), dsec("b", ["y"], [["1"]])])
write("decode/010_gcx2_line_inside_a_payload_is_a_row", "gcx2_line_is_a_row",
      "only a GCX1 line starts a new section; a GCX2 line written by the reference encoder is data", "decode",
      input="GCX1 tool=t fields=a\nGCX2 tool=b\n", expected=[dsec("t", ["a"], [["GCX2 tool=b"]])])
write("decode/011_gcx1_prefixed_row_is_a_row", "gcx1_prefixed_row_is_a_row",
      "a header is the tag followed by a space; the reference encoder's row GCX1Foo stays a row (gcx-go fails on it)",
      "decode", input="GCX1 tool=t fields=a,b\nGCX1Foo\ttype\n", expected=[dsec("t", ["a", "b"], [["GCX1Foo", "type"]])])
write("decode/012_empty_fields_is_one_empty_field", "empty_fields_is_one_empty_field",
      "fields= declares one field named \"\" (the reference's bytes for an empty object)", "decode",
      input="GCX1 tool=t fields=\n\n", expected=[dsec("t", [""], [])])
write("decode/013_leading_blank_and_comment_lines", "leading_blank_and_comment_lines",
      "blank and comment lines before the first header are skipped", "decode",
      input="\n# produced by x\nGCX1 tool=t fields=a\nx\n", expected=[dsec("t", ["a"], [["x"]])])
write("decode/014_escaped_cr_at_line_end", "escaped_cr_at_line_end",
      "backslash + CR before the LF is data, not a CRLF line ending", "decode",
      input="GCX1 tool=t fields=a,b\nx\ta\\\r\n", expected=[dsec("t", ["a", "b"], [["x", "a\r"]])])
write("decode/015_byte_order_mark_skipped", "byte_order_mark_skipped", "a UTF-8 BOM before the first header is skipped",
      "decode", input="\ufeffGCX1 tool=t fields=a\nx\n", expected=[dsec("t", ["a"], [["x"]])])
write("decode/016_extra_spaces_in_header", "extra_spaces_in_header", "the header is trimmed and empty tokens skipped",
      "decode", input="GCX1   tool=t   fields=a,b  n=1  \nx\ty\n", expected=[dsec("t", ["a", "b"], [["x", "y"]], meta={"n": "1"})])
write("decode/017_escaped_first_cell", "escaped_first_cell", "\\# and \\GCX decode to # and GCX",
      "decode", input="GCX1 tool=t fields=a\n\\#tag\n\\GCX1 tool=x\n", expected=[dsec("t", ["a"], [["#tag"], ["GCX1 tool=x"]])])
write("decode/018_field_names_unescaped_twice", "field_names_unescaped_twice",
      "as the reference decoders do, field names are unescaped twice: a\\\\\\\\b is a\\b, a\\\\b is ab", "decode",
      input="GCX1 tool=t fields=a\\\\\\\\b,c\\\\d\n", expected=[dsec("t", ["a\\b", "cd"], [])])
write("decode/019_meta_values_unescaped", "meta_values_unescaped", "meta keys and values are unescaped",
      "decode", input="GCX1 tool=t fields=a msg=a\\tb\\nc eq=x=y\n", expected=[dsec("t", ["a"], [], meta={"msg": "a\tb\nc", "eq": "x=y"})])
write("decode/020_whitespace_only_row_is_data", "whitespace_only_row_is_data", "only an empty line is blank; a space is a value",
      "decode", input="GCX1 tool=t fields=a\n \n", expected=[dsec("t", ["a"], [[" "]])])

derr = [
    ("001_empty_payload", dict(input=""), "empty_payload", pos(1, 1), {}),
    ("002_blank_and_comments_only", dict(input="\n# nothing\n\n"), "empty_payload", pos(3, 1), {}),
    ("003_gcx2_header", dict(input="GCX2 tool=t fields=a\nx\n"), "unsupported_version", pos(1, 1), {}),
    ("004_gcx10_header", dict(input="GCX10 tool=t fields=a\n"), "unsupported_version", pos(1, 1), {}),
    ("005_lowercase_tag", dict(input="gcx1 tool=t fields=a\n"), "missing_header", pos(1, 1), {}),
    ("006_row_before_header", dict(input="x\ty\nGCX1 tool=t fields=a,b\n"), "missing_header", pos(1, 1), {}),
    ("007_token_without_equals", dict(input="GCX1 tool=t fields=a oops\n"), "malformed_header", pos(1, 22), {}),
    ("008_missing_tool", dict(input="GCX1 fields=a\n"), "missing_tool", pos(1, 1), {}),
    ("009_empty_tool", dict(input="GCX1 tool= fields=a\n"), "missing_tool", pos(1, 1), {}),
    ("010_missing_fields", dict(input="GCX1 tool=t\nx\n"), "missing_fields", pos(1, 1), {}),
    ("011_too_many_values", dict(input="GCX1 tool=t fields=a,b\nx\ty\n1\t2\t3\n"), "too_many_values", pos(3, 5), {}),
    ("012_line_too_long", dict(input="GCX1 tool=t fields=a\n0123456789abcdefghijklmnopq\n"), "line_too_long", pos(2, 25), {"max_line_length": 24}),
    ("013_too_many_fields", dict(input="GCX1 tool=t fields=a,b,c\n"), "too_many_fields", pos(1, 13), {"max_fields": 2}),
    ("014_too_many_meta", dict(input="GCX1 tool=t fields=a x=1 y=2\n"), "too_many_meta", pos(1, 26), {"max_meta": 1}),
    ("015_padding_limit", dict(input="GCX1 tool=t fields=a,b,c\nx\ny\n"), "padding_limit", pos(3, 1), {"max_padding": 3}),
    ("016_invalid_utf8", dict(input_base64=base64.b64encode(b"GCX1 tool=t fields=a\nab\xffc\n").decode()), "invalid_utf8", pos(2, 3), {}),
    ("017_tag_without_space", dict(input="GCX1tool=t fields=a\n"), "unsupported_version", pos(1, 1), {}),
    ("018_too_many_values_in_second_section", dict(input="GCX1 tool=a fields=x,y\n1\t2\nGCX1 tool=b fields=z\n1\t2\n"), "too_many_values", pos(4, 3), {}),
    ("019_header_line_too_long", dict(input="GCX1 tool=t fields=abcdefghijklmnopqrstuvwxyz\n"), "line_too_long", pos(1, 33), {"max_line_length": 32}),
    ("020_duplicate_field", dict(input="GCX1 tool=t fields=a,b,a\n1\t2\t3\n"), "duplicate_field", pos(1, 24), {}),
]
for n, inp, code, p, limits in derr:
    kw = dict(inp)
    kw["expected_error"] = code
    if limits:
        kw["limits"] = limits
    if p:
        kw["position"] = p
    write("errors/" + n, n[4:], "decoding fails with " + code, "error", **kw)

# ---------------------------------------------------------------- value codec: bare values
def any_case(n, desc, value, expected, tool="t"):
    write("any/" + n, n[4:], desc, "encode-any", tool=tool, input=value, expected=expected)

any_case("001_object_plain_strings", "an object of strings: fields are its keys, one row; byte-identical to the reference",
         {"a": "y", "b": "x"}, "GCX1 tool=t fields=a,b\ny\tx\n")
any_case("002_object_types", "a null needs JSON text (v), so the section spells every column's type: b bool, n number, v JSON, s string, j nested",
         {"admin": True, "age": 36, "boss": None, "name": "Ada", "tags": ["x"]},
         "GCX1 tool=t fields=admin,age,boss,name,tags types=bnvsj\ntrue\t36\tnull\tAda\t[\"x\"]\n")
any_case("003_array_of_objects_union_of_keys", "union of keys in the order first seen; missing keys are empty cells; cells read as what they look like",
         [{"id": 1, "name": "a"}, {"extra": "z", "id": 2}],
         "GCX1 tool=t fields=id,name,extra\n1\ta\t\n2\t\tz\n")
any_case("004_array_of_strings", "an array of strings: field value, one row each", ["x", "y"], "GCX1 tool=t fields=value\nx\ny\n")
any_case("005_mixed_array", "mixed types in one column: each cell is its JSON text",
         [1, "1", True, "true", None, {"a": 1}],
         "GCX1 tool=t fields=value types=v\n1\n\"1\"\ntrue\n\"true\"\nnull\n{\"a\":1}\n")
any_case("006_scalar_string", "a scalar: field value, one row", "hello", "GCX1 tool=t fields=value\nhello\n")
any_case("007_scalar_number", "a number reads back as a number without a type letter", 42, "GCX1 tool=t fields=value\n42\n")
any_case("008_scalar_null", "null would be a blank line (lost by the reference); as JSON it is `null`", None,
         "GCX1 tool=t fields=value types=v\nnull\n")
any_case("009_scalar_empty_string", "\"\" would be a blank line (lost by the reference); as JSON it is `\"\"`", "",
         "GCX1 tool=t fields=value types=v\n\"\"\n")
any_case("010_empty_object", "the reference's bytes for {}: one empty field name and a blank line", {},
         "GCX1 tool=t fields=\n\n")
any_case("011_empty_array", "an empty array: the header alone", [], "GCX1 tool=t fields=value\n")
any_case("012_object_with_only_key_value", "an object whose only key is `value` is marked shape=record (else it reads as a scalar)",
         {"value": "x"}, "GCX1 tool=t fields=value shape=record\nx\n")
any_case("013_rows_with_only_key_value", "an array of objects whose only key is `value` is marked shape=rows",
         [{"value": 1}, {"value": 2}], "GCX1 tool=t fields=value shape=rows\n1\n2\n")
any_case("014_nested_json_go_escapes", "nested values are compact JSON with Go's HTML-safe escapes, then row-escaped",
         {"a": {"y": 1, "z": "<b>&"}, "b": "x"},
         "GCX1 tool=t fields=a,b\n{\"y\":1,\"z\":\"\\\\u003cb\\\\u003e\\\\u0026\"}\tx\n")
any_case("015_json_looking_strings_get_letters", "strings that would read as a number, JSON or a boolean are marked s; `null` reads as text anyway",
         {"n": "42", "s": "{\"a\":1}", "t": "true", "z": "null"}, "GCX1 tool=t fields=n,s,t,z types=ssss\n42\t{\"a\":1}\ttrue\tnull\n")
any_case("016_crlf_string_as_json", "a string with CR before LF is written as JSON text, so CRLF survives",
         {"k": "x", "s": "a\r\nb"}, "GCX1 tool=t fields=k,s types=sv\nx\t\"a\\\\r\\\\nb\"\n")
any_case("017_first_column_protected", "a first cell starting with # or GCX is protected by a backslash",
         {"a": "#x", "b": "GCX1 y"}, "GCX1 tool=t fields=a,b\n\\#x\tGCX1 y\n")
any_case("018_single_key_missing_becomes_json_objects",
         "one key missing from some element would need an empty one-column row: elements become JSON objects",
         [{"a": 1}, {}], "GCX1 tool=t fields=value\n{\"a\":1}\n{}\n")
any_case("019_key_with_space_as_json_cell", "a key that cannot be a field name puts the object in one JSON cell",
         {"first name": "Ada"}, "GCX1 tool=t fields=value\n{\"first name\":\"Ada\"}\n")
any_case("020_number_lexemes_verbatim", "numbers keep their JSON lexeme (with arbitrary_precision, as the runner builds), as Go's json.Number does",
         [N("1e+2"), N("0.50"), N("-0"), N("1.0"), N("12345678901234567890")],
         "GCX1 tool=t fields=value\n1e+2\n0.50\n-0\n1.0\n12345678901234567890\n")
any_case("021_booleans", "a column of booleans", [True, False], "GCX1 tool=t fields=value\ntrue\nfalse\n")
any_case("022_one_column_with_empty_string", "a one-column section with an empty string uses JSON text",
         [{"a": "x"}, {"a": ""}], "GCX1 tool=t fields=a types=v\n\"x\"\n\"\"\n")
any_case("023_null_vs_empty_vs_missing", "null, \"\" and a missing key stay distinct",
         [{"a": None, "b": 1}, {"a": "", "b": 2}, {"b": 3}],
         "GCX1 tool=t fields=a,b types=vn\nnull\t1\n\"\"\t2\n\t3\n")
any_case("024_strings_with_escapes", "row escapes inside plain strings", {"a": "tab\there", "b": "back\\slash", "c": "nl\n"},
         "GCX1 tool=t fields=a,b,c\ntab\\there\tback\\\\slash\tnl\\n\n")
any_case("025_empty_string_in_wide_record", "an empty cell reads as a missing member, so an empty string needs the letter s",
         {"a": "", "b": "x"}, "GCX1 tool=t fields=a,b types=ss\n\tx\n")
any_case("026_nested_arrays_of_arrays", "nested arrays inside an array of scalars", [[1, [2]], []],
         "GCX1 tool=t fields=value\n[1,[2]]\n[]\n")
any_case("027_object_keys_with_equals_and_backslash", "`=` and backslash are fine in field names",
         {"a=b": "1", "c\\d": "2"}, "GCX1 tool=t fields=a=b,c\\\\\\\\d types=ss\n1\t2\n")
any_case("028_sparse_bool_and_nested_columns", "missing members under boolean, nested and text columns need no letters",
         [{"f": True, "o": {"k": []}}, {"x": "y"}],
         "GCX1 tool=t fields=f,o,x\ntrue\t{\"k\":[]}\t\n\t\ty\n")
any_case("029_one_row_array", "an array of one object says rows=1 (one row alone reads as the object)",
         [{"a": 1, "b": "x"}], "GCX1 tool=t fields=a,b rows=1\n1\tx\n")
any_case("030_one_element_scalar_array", "an array of one scalar says rows=1", ["x"], "GCX1 tool=t fields=value rows=1\nx\n")
any_case("031_dotted_tool_bare_rows", "under a dotted tool name a lone section reads as a wrapper's member, so bare rows say shape=rows",
         [{"x": 1}, {"x": 2}], "GCX1 tool=a.b fields=x shape=rows\n1\n2\n", tool="a.b")
any_case("032_dotted_tool_record", "a bare record under a dotted tool name", {"x": 1}, "GCX1 tool=a.b fields=x shape=record\n1\n", tool="a.b")
any_case("033_dotted_tool_scalar", "a bare scalar under a dotted tool name", 5, "GCX1 tool=a.b fields=value shape=scalar\n5\n", tool="a.b")
any_case("034_dotted_tool_scalar_array", "a bare array of scalars under a dotted tool name", [1, 2],
         "GCX1 tool=a.b fields=value shape=values\n1\n2\n", tool="a.b")

write("any/decode_001_reference_cells_read_as_they_look", "reference_cells_read_as_they_look",
      "a reference payload has no type meta: cells read as what they look like", "decode-any",
      input="GCX1 tool=t fields=id,n rows=1\n1\ta\n", expected=[{"id": 1, "n": "a"}], tool="t")
write("any/decode_002_reference_record", "reference_record", "the reference's record shape", "decode-any",
      input="GCX1 tool=t fields=a,b\nx\ty\n", expected={"a": "x", "b": "y"})
write("any/decode_003_reference_empty_object", "reference_empty_object", "the reference's bytes for {}", "decode-any",
      input="GCX1 tool=t fields=\n\n", expected={})
write("any/decode_004_padded_upper_case_columns", "padded_upper_case_columns",
      "omitted trailing cells under upper-case letters are missing keys", "decode-any",
      input="GCX1 tool=t fields=a,b rows=2 types=nS\n1\tx\n2\n", expected=[{"a": 1, "b": "x"}, {"a": 2}])
write("any/decode_005_explicit_shapes", "explicit_shapes", "shape=values and shape=scalar may also be spelled out",
      "decode-any", input="GCX1 tool=t fields=value rows=1 shape=values types=n\n7\n", expected=[7])
write("any/decode_006_zero_rows_without_rows_meta", "zero_rows_without_rows_meta",
      "a section with no rows and no rows= meta is an empty array", "decode-any",
      input="GCX1 tool=t fields=a,b\n", expected=[])
write("any/decode_007_inference_edges", "inference_edges",
      "inference reads JSON numbers, booleans and JSON arrays and objects; anything else, numbers out of range and broken JSON included, is text",
      "decode-any", input="GCX1 tool=t fields=a,b,c,d,e,f,g\n007\t1e400\t-0\t[1,\t{x\tnull\tTrue\n",
      expected={"a": "007", "b": "1e400", "c": N("-0"), "d": "[1,", "e": "{x", "f": "null", "g": "True"})

aerr = [
    ("001_types_length_mismatch", "GCX1 tool=t fields=a types=nn\n1\n", "invalid_meta", pos(1, 1)),
    ("002_unknown_type_letter", "GCX1 tool=t fields=a types=q\n1\n", "invalid_meta", pos(1, 1)),
    ("003_rows_count_mismatch", "GCX1 tool=t fields=value rows=3\na\nb\n", "row_count", pos(1, 1)),
    ("004_bad_number_cell", "GCX1 tool=t fields=a,b types=sn\nx\tten\n", "invalid_value", pos(2, 3)),
    ("005_unrelated_second_section", "GCX1 tool=t fields=a\n1\nGCX1 tool=u fields=a\n", "unexpected_section", pos(3, 1)),
    ("006_bad_json_cell", "GCX1 tool=t fields=a types=j\n{\n", "invalid_value", pos(2, 1)),
    ("007_record_with_two_rows", "GCX1 tool=t fields=a shape=record\n1\n2\n", "row_count", pos(1, 1)),
    ("008_unknown_shape", "GCX1 tool=t fields=a shape=blob\n1\n", "invalid_meta", pos(1, 1)),
    ("009_bad_bool_cell", "GCX1 tool=t fields=a types=b\nyes\n", "invalid_value", pos(2, 1)),
    ("010_scalar_json_in_nested_column", "GCX1 tool=t fields=a types=j\n1\n", "invalid_value", pos(2, 1)),
    ("011_missing_element", "GCX1 tool=t fields=value rows=2 types=v\n1\n\\\n", "invalid_value", pos(3, 1)),
    ("012_rows_beyond_the_count_stop_at_once", "GCX1 tool=t fields=a rows=2\n1\n2\n3\n4\n", "row_count", pos(4, 1)),
    ("013_member_twice", "GCX1 tool=t.a fields=x\n1\nGCX1 tool=t.b fields=y\n2\nGCX1 tool=t.a fields=x\n3\n", "unexpected_section", pos(5, 1)),
    ("014_section_of_another_tool", "GCX1 tool=t.a fields=x\n1\nGCX1 tool=u.b fields=x\n2\n", "unexpected_section", pos(3, 1)),
    ("015_known_integer_column", "GCX1 tool=search_symbols fields=id,line\na\t3.5\n", "invalid_value", pos(2, 3)),
    ("016_invalid_escape_before_a_multibyte_character", "GCX1 tool=t fields=a types=j\n\"\\\\\u00e9\"\n", "invalid_value", pos(2, 1)),
]
for n, text, code, p in aerr:
    kw = dict(input=text, expected_error=code)
    if p:
        kw["position"] = p
    write("any/err_" + n, n[4:], "decode_any fails with " + code, "any-error", **kw)

# ---------------------------------------------------------------- value codec: wrapped responses
def shape(n, desc, value, expected, tool="t"):
    write("shapes/" + n, n[4:], desc, "encode-any", tool=tool, input=value, expected=expected)

shape("001_rows_under_a_wrapper_key", "one array of objects beside scalars: a section tool.key, the scalars typed in its header",
      {"results": [{"id": "a", "line": 3}, {"id": "b", "line": 4}], "total": 9, "truncated": True},
      "GCX1 tool=t.results fields=id,line total=9 truncated=true\na\t3\nb\t4\n")
shape("002_known_tool_writes_gortex_shape", "for search_symbols the rows travel under the tool's own name, as Gortex writes them",
      {"results": [{"id": "a", "line": 3}, {"id": "b", "line": 4}], "total": 9, "truncated": True},
      "GCX1 tool=search_symbols fields=id,line total=9 truncated=true\na\t3\nb\t4\n", tool="search_symbols")
shape("003_nodes_and_edges", "several arrays of objects: one section each, the meta on the first",
      {"edges": [{"from": "b", "to": "a"}], "nodes": [{"id": "a"}, {"id": "b"}], "truncated": False},
      "GCX1 tool=t.edges fields=from,to truncated=false\nb\ta\nGCX1 tool=t.nodes fields=id\na\nb\n")
shape("004_text_scalars_in_a_record_section", "a scalar a header cannot carry (spaces) goes to one row of a section named like the tool",
      {"n": 2, "symbols": [{"id": "a"}, {"id": "b"}], "task": "find the bug"},
      "GCX1 tool=t fields=task n=2\nfind the bug\nGCX1 tool=t.symbols fields=id\na\nb\n")
shape("005_smart_context_task_section", "smart_context's task has a section of its own (the spec's .task)",
      {"symbols": [{"id": "a"}, {"id": "b"}], "task": "find the bug"},
      "GCX1 tool=smart_context.symbols fields=id\na\nb\nGCX1 tool=smart_context.task fields=task\nfind the bug\n", tool="smart_context")
shape("006_meta_values_as_json_text", "meta values that would read as something else are JSON text; null and booleans and numbers are themselves",
      {"big": 1.5, "e": "", "etag": "42", "items": [{"a": 1}, {"a": 2}], "none": None},
      "GCX1 tool=t.items fields=a big=1.5 e= etag=\"42\" none=null\n1\n2\n")
shape("007_reserved_keys_and_lists", "reserved meta keys and short lists ride in the record section; long lists of scalars get a section",
      {"few": ["x"], "rows": [{"a": 1}, {"a": 2}], "tags": ["w", "x", "y", "z"], "tool": "me", "types": "q"},
      "GCX1 tool=t fields=few,tool,types\n[\"x\"]\tme\tq\nGCX1 tool=t.rows fields=a\n1\n2\nGCX1 tool=t.tags fields=value\nw\nx\ny\nz\n")
shape("008_repo_outline", "get_repo_outline: one section per table, short lists in the record section",
      {"communities": [{"id": 0, "name": "core"}, {"id": 1, "name": "mcp"}], "entry_points": ["main.go::main"],
       "languages": [{"name": "go", "nodes": 35}]},
      "GCX1 tool=get_repo_outline fields=entry_points\n[\"main.go::main\"]\n"
      "GCX1 tool=get_repo_outline.communities fields=id,name\n0\tcore\n1\tmcp\n"
      "GCX1 tool=get_repo_outline.languages fields=name,nodes\ngo\t35\n", tool="get_repo_outline")
shape("009_dotted_member_key_rides_as_json", "a member whose key has a dot cannot name a section: it rides as JSON",
      {"a.b": [{"x": 1}, {"x": 2}], "c": [{"y": 1}, {"y": 2}]},
      "GCX1 tool=t fields=a.b\n[{\"x\":1},{\"x\":2}]\nGCX1 tool=t.c fields=y\n1\n2\n")
shape("010_member_named_like_a_known_tool", "analyze + hotspots would name the tool analyze.hotspots: the member rides as JSON",
      {"hotspots": [{"id": "a", "score": 1}, {"id": "b", "score": 2}]},
      "GCX1 tool=analyze fields=hotspots\n[{\"id\":\"a\",\"score\":1},{\"id\":\"b\",\"score\":2}]\n", tool="analyze")
shape("011_one_row_member_is_still_an_array", "a member section holds an array, one row or none",
      {"a": [{"x": 1}], "b": [{"y": 2}, {"y": 3}]},
      "GCX1 tool=t.a fields=x\n1\nGCX1 tool=t.b fields=y\n2\n3\n")

for n, desc, text, value, tool in [
    ("decode_004_continued_sections", "consecutive sections of one name continue one array (a streaming writer re-heads when a row does not fit)",
     "GCX1 tool=t fields=a\n1\nGCX1 tool=t fields=a,b types=nS\n2\tx\nGCX1 tool=t fields=value\n3\n", [{"a": 1}, {"a": 2, "b": "x"}, 3], "t"),
    ("decode_001_lone_member_section", "a lone section tool.key is the member key of a wrapper",
     "GCX1 tool=t.items fields=a n=2\n1\n2\n", {"items": [{"a": 1}, {"a": 2}], "n": 2}, "t"),
    ("decode_002_meta_of_every_section", "meta of every section are members of the wrapper; the first wins",
     "GCX1 tool=t.a fields=x k=1\n1\nGCX1 tool=t.b fields=y k=2 j=3\n2\n", {"a": [{"x": 1}], "b": [{"y": 2}], "k": 1, "j": 3}, "t"),
    ("decode_003_member_wins_over_meta", "a member named like a meta key keeps the member (Gortex's edges=N beside the edges)",
     "GCX1 tool=find_usages fields=from edges=1 truncated=false\na\n", {"edges": [{"from": "a"}], "truncated": False}, "find_usages"),
]:
    write("shapes/" + n, n[11:], desc, "decode-any", input=text, expected=value, tool=tool)

# ---------------------------------------------------------------- what Gortex writes
def gortex(n, desc, text, value, tool):
    write("gortex/" + n, n[4:], desc, "decode-any", input=text, expected=value, tool=tool)

gortex("001_benchmark_rows", "the wire-format harness's rows (EncodeAny): sorted fields, rows=N, no type letters",
       "GCX1 tool=search_symbols fields=file_path,id,kind,name,start_line rows=2\n"
       "src/a.go\tsrc/a.go::Open\tfunction\tOpen\t12\nsrc/b.go\tsrc/b.go::Close\tmethod\tClose\t40\n",
       [{"file_path": "src/a.go", "id": "src/a.go::Open", "kind": "function", "name": "Open", "start_line": 12},
        {"file_path": "src/b.go", "id": "src/b.go::Close", "kind": "method", "name": "Close", "start_line": 40}], "search_symbols")
gortex("002_benchmark_record", "an object as one row (EncodeAny), source escaped",
       "GCX1 tool=get_symbol_source fields=end_line,etag,file_path,from_line,id,name,source,start_line\n"
       "14\t0af1\tsrc/a.go\t9\tsrc/a.go::Open\tOpen\tfunc Open() error {\\n\\treturn nil\\n}\t10\n",
       {"end_line": 14, "etag": "0af1", "file_path": "src/a.go", "from_line": 9, "id": "src/a.go::Open", "name": "Open",
        "source": "func Open() error {\n\treturn nil\n}", "start_line": 10}, "get_symbol_source")
gortex("003_benchmark_symbols_wrapper", "{symbols, total, etag}: rows under the tool's wrapper key, the header's totals typed; empty cells are missing members",
       "GCX1 tool=batch_symbols fields=end_line,error,id,start_line etag=ffee01 rows=2 total=2\n"
       "20\t\tsrc/a.go::Open\t10\n\tsymbol not found\tsrc/b.go::Gone\t\n",
       {"symbols": [{"end_line": 20, "id": "src/a.go::Open", "start_line": 10}, {"error": "symbol not found", "id": "src/b.go::Gone"}],
        "etag": "ffee01", "total": 2}, "batch_symbols")
gortex("004_benchmark_edges_wrapper", "{edges, total_edges}: find_usages' rows under edges; float lexemes kept",
       "GCX1 tool=find_usages fields=confidence,from,kind,origin,to rows=2 total_edges=2\n"
       "1.0\tsrc/a.go::Open\tcalls\tast_resolved\tsrc/c.go::read\n0.95\tsrc/b.go::Close\tcalls\tast_inferred\tsrc/c.go::read\n",
       {"edges": [{"confidence": N("1.0"), "from": "src/a.go::Open", "kind": "calls", "origin": "ast_resolved", "to": "src/c.go::read"},
                  {"confidence": N("0.95"), "from": "src/b.go::Close", "kind": "calls", "origin": "ast_inferred", "to": "src/c.go::read"}],
        "total_edges": 2}, "find_usages")
gortex("005_benchmark_nodes_and_edges", "{nodes, edges, ...}: two sections, the totals on .nodes",
       "GCX1 tool=get_callers.nodes fields=file_path,id,start_line rows=1 total_nodes=1 truncated=false\nsrc/a.go\tsrc/a.go::Open\t12\n"
       "GCX1 tool=get_callers.edges fields=confidence,from,to rows=0\n",
       {"nodes": [{"file_path": "src/a.go", "id": "src/a.go::Open", "start_line": 12}], "edges": [],
        "total_nodes": 1, "truncated": False}, "get_callers")
gortex("006_benchmark_one_section_per_key", "an object of arrays: one section per key, scalars in value sections, an empty one with rows=0",
       "GCX1 tool=get_repo_outline.communities fields=id,modularity,name,size rows=1\n0\t0.42\tcore\t1205\n"
       "GCX1 tool=get_repo_outline.entry_points fields=value rows=1\ncmd/main.go::main\n"
       "GCX1 tool=get_repo_outline.most_imported fields=value rows=0\n",
       {"communities": [{"id": 0, "modularity": N("0.42"), "name": "core", "size": 1205}], "entry_points": ["cmd/main.go::main"],
        "most_imported": []}, "get_repo_outline")
gortex("007_benchmark_json_cells", "nested values as compact JSON cells; a missing key is an empty cell",
       "GCX1 tool=contracts fields=consumers,id,method,providers rows=2\n"
       "[\"web/a.ts::load\"]\thttp::GET::/users\tGET\t[\"api/u.go::List\"]\n[]\ttopic::orders\t\t[\"orders/p.go::Publish\"]\n",
       [{"consumers": ["web/a.ts::load"], "id": "http::GET::/users", "method": "GET", "providers": ["api/u.go::List"]},
        {"consumers": [], "id": "topic::orders", "providers": ["orders/p.go::Publish"]}], "contracts")
gortex("008_production_search_symbols", "Gortex's encoder today: 13 columns, a comment, total and truncated; booleans and integers typed by the tool",
       "GCX1 tool=search_symbols fields=id,kind,name,path,path_abs,line,sig,enclosing,is_test,test_role,test_runner,type_flavor,ui_component total=3 truncated=true\n"
       "# 1 result(s)\nsrc/a.go::Open\tfunction\tOpen\tsrc/a.go\t/repo/src/a.go\t12\tfunc Open() error\t\tfalse\t\t\t\t\n",
       {"results": [{"id": "src/a.go::Open", "kind": "function", "name": "Open", "path": "src/a.go", "path_abs": "/repo/src/a.go",
                     "line": 12, "sig": "func Open() error", "is_test": False}], "total": 3, "truncated": True}, "search_symbols")
gortex("009_production_graph_with_notes", "a graph without total (Gortex's golden get_callers), tier and via on edges, a .notes section",
       "GCX1 tool=get_callers.nodes fields=id,kind,name,path,line truncated=false\nsrc/a.go::Open\tfunction\tOpen\tsrc/a.go\t12\n"
       "GCX1 tool=get_callers.edges fields=from,to,kind,origin,tier,via,confidence,label,line,file_path count=1\n"
       "src/b.go::main\tsrc/a.go::Open\tcalls\tast_resolved\tast\t\t1\thigh\t7\tsrc/b.go\n"
       "GCX1 tool=get_callers.notes fields=kind,class,message\ncaveat\tweak\tonly text matches for some callers\n",
       {"nodes": [{"id": "src/a.go::Open", "kind": "function", "name": "Open", "path": "src/a.go", "line": 12}],
        "edges": [{"from": "src/b.go::main", "to": "src/a.go::Open", "kind": "calls", "origin": "ast_resolved", "tier": "ast",
                   "confidence": 1.0, "label": "high", "line": 7, "file_path": "src/b.go"}],
        "notes": [{"kind": "caveat", "class": "weak", "message": "only text matches for some callers"}],
        "truncated": False, "count": 1}, "get_callers")
gortex("010_production_symbol_source", "get_symbol_source: one row, its meta (etag, omissions) merged; text columns stay text",
       "GCX1 tool=get_symbol_source fields=id,kind,name,path,start_line,end_line,from_line,sig,etag,source etag=1234 omissions=comments\n"
       "f\tfunction\tf\tf.json\t1\t3\t1\t\t1234\t[1, 2]\n",
       {"id": "f", "kind": "function", "name": "f", "path": "f.json", "start_line": 1, "end_line": 3, "from_line": 1,
        "etag": "1234", "source": "[1, 2]", "omissions": "comments"}, "get_symbol_source")
gortex("011_unknown_tool_wrapper", "a lone section with meta under an unknown tool: rows under `results` (the harness's first rule)",
       "GCX1 tool=my_tool fields=id rows=2 total=2\na\nb\n", {"results": [{"id": "a"}, {"id": "b"}], "total": 2}, "my_tool")
gortex("012_unknown_tool_wrapper_with_etag", "... under `symbols` when an etag rides along",
       "GCX1 tool=my_tool fields=id etag=x1 rows=1\na\n", {"symbols": [{"id": "a"}], "etag": "x1"}, "my_tool")
gortex("013_production_hotspots", "analyze.hotspots with Gortex's betweenness column and count",
       "GCX1 tool=analyze.hotspots fields=id,name,path,line,fan_in,fan_out,cross_cut,betweenness,score count=1\n"
       "s.go::Serve\tServe\ts.go\t5\t12\t30\t3\t0.25\t81.3\n",
       {"items": [{"id": "s.go::Serve", "name": "Serve", "path": "s.go", "line": 5, "fan_in": 12, "fan_out": 30, "cross_cut": 3,
                   "betweenness": N("0.25"), "score": N("81.3")}], "count": 1}, "analyze.hotspots")

# ---------------------------------------------------------------- exact numbers
write("numbers/001_big_integer_keeps_its_digits", "big_integer_keeps_its_digits", "an integer beyond 64 bits keeps every digit",
      "encode-any", tool="t", input={"n": N("123456789012345678901234567890")}, expected="GCX1 tool=t fields=n\n123456789012345678901234567890\n")
write("numbers/002_minus_zero_kept", "minus_zero_kept", "-0 keeps its sign", "decode-any",
      input="GCX1 tool=t fields=a types=n\n-0\n", expected={"a": N("-0")})
write("numbers/003_float_lexemes_kept", "float_lexemes_kept", "a float keeps its lexeme", "decode-any",
      input="GCX1 tool=t fields=a,b,c types=nnn\n0.50\t1E+2\t5e-324\n", expected={"a": N("0.50"), "b": N("1E+2"), "c": N("5e-324")})
for n, cell in [("004_overflow_is_an_error", "1e400"), ("005_underflow_is_an_error", "1e-400"), ("006_negative_overflow_is_an_error", "-1e999")]:
    write("numbers/" + n, n[4:], f"{cell} in a number cell is an error, never infinity or zero", "any-error",
          input=f"GCX1 tool=t fields=a types=n\n{cell}\n", expected_error="invalid_value", position=pos(2, 1))
write("numbers/007_overflow_in_a_json_cell", "overflow_in_a_json_cell", "out of range inside a JSON cell too", "any-error",
      input="GCX1 tool=t fields=a types=j\n[1,1e400]\n", expected_error="invalid_value", position=pos(2, 1))
write("numbers/008_zero_with_a_big_exponent_is_zero", "zero_with_a_big_exponent_is_zero", "0e-400 is zero, not an underflow",
      "decode-any", input="GCX1 tool=t fields=a types=n\n0e-400\n", expected={"a": N("0e-400")})

# ---------------------------------------------------------------- one rule for limits
write("limits/001_line_too_long_refused_on_encode", "line_too_long_refused_on_encode",
      "a row longer than the line limit is refused when written, not after", "encode-any-error",
      tool="t", input={"a": "x" * 40}, limits={"max_line_length": 20}, expected_error="line_too_long")
write("limits/002_header_too_long_refused_on_encode", "header_too_long_refused_on_encode",
      "a header longer than the line limit too", "encode-any-error",
      tool="t", input={"a_rather_long_field_name": 1}, limits={"max_line_length": 20}, expected_error="line_too_long")
# ---------------------------------------------------------------- layouts
def layout(n, name, desc, value, text, decodes_to=None):
    kw = dict(layout=name, input=value, expected=text)
    if decodes_to is not None:
        kw["decodesTo"] = decodes_to
    write("layouts/" + n, n[4:], desc, "encode-layout", **kw)

layout("001_search_symbols", "search_symbols", "meta total and truncated, the `# N result(s)` comment, one row per hit; an empty sig is an empty cell",
       {"results": [
           {"id": "internal/mcp/server.go::NewServer", "kind": "function", "name": "NewServer", "path": "internal/mcp/server.go", "line": 62, "sig": "func NewServer(cfg Config) *Server"},
           {"id": "internal/mcp/server.go::Server.Start", "kind": "method", "name": "Start", "path": "internal/mcp/server.go", "line": 118}],
        "total": 7, "truncated": True},
       "GCX1 tool=search_symbols fields=id,kind,name,path,line,sig total=7 truncated=true\n# 2 result(s)\n"
       "internal/mcp/server.go::NewServer\tfunction\tNewServer\tinternal/mcp/server.go\t62\tfunc NewServer(cfg Config) *Server\n"
       "internal/mcp/server.go::Server.Start\tmethod\tStart\tinternal/mcp/server.go\t118\t\n")
layout("002_get_symbol_source", "get_symbol_source", "one row; source escaped; etag also in the header",
       {"id": "a.go::F", "kind": "function", "name": "F", "path": "a.go", "start_line": 10, "end_line": 12, "from_line": 8,
        "sig": "func F()", "etag": "abc123", "source": "func F() {\n\treturn\n}"},
       "GCX1 tool=get_symbol_source fields=id,kind,name,path,start_line,end_line,from_line,sig,etag,source etag=abc123\n"
       "a.go::F\tfunction\tF\ta.go\t10\t12\t8\tfunc F()\tabc123\tfunc F() {\\n\\treturn\\n}\n")
layout("003_batch_symbols_with_source", "batch_symbols", "the source column comes before error when a symbol has source; meta count",
       {"symbols": [
           {"id": "a.go::F", "kind": "function", "name": "F", "path": "a.go", "start_line": 1, "end_line": 3, "sig": "func F()", "source": "func F() {}"}],
        "count": 1},
       "GCX1 tool=batch_symbols fields=id,kind,name,path,start_line,end_line,sig,source,error count=1\n"
       "a.go::F\tfunction\tF\ta.go\t1\t3\tfunc F()\tfunc F() {}\t\n")
layout("004_batch_symbols_unresolved", "batch_symbols", "an unresolved symbol: empty cells and the error",
       {"symbols": [
           {"id": "x.go::Missing", "error": "not found"},
           {"id": "a.go::F", "kind": "function", "name": "F", "path": "a.go", "start_line": 1, "end_line": 3}],
        "count": 2},
       "GCX1 tool=batch_symbols fields=id,kind,name,path,start_line,end_line,sig,error count=2\n"
       "x.go::Missing\t\t\t\t\t\t\tnot found\na.go::F\tfunction\tF\ta.go\t1\t3\t\t\n")
layout("005_find_usages", "find_usages", "meta edges counts the rows; confidence keeps its lexeme", {"edges": [
           {"from": "a.go::G", "to": "a.go::F", "edge_kind": "calls", "origin": "lsp_resolved", "confidence": N("0.95"), "from_name": "G", "from_path": "a.go", "from_line": 30},
           {"from": "b.go::H", "to": "a.go::F", "edge_kind": "references", "origin": "text_matched", "confidence": N("1.0"), "from_name": "H", "from_path": "b.go", "from_line": 4}]},
       "GCX1 tool=find_usages fields=from,to,edge_kind,origin,confidence,from_name,from_path,from_line edges=2\n"
       "a.go::G\ta.go::F\tcalls\tlsp_resolved\t0.95\tG\ta.go\t30\n"
       "b.go::H\ta.go::F\treferences\ttext_matched\t1.0\tH\tb.go\t4\n")
layout("006_get_file_summary", "get_file_summary", "meta total_nodes, total_edges, truncated, etag",
       {"symbols": [{"id": "a.go::F", "kind": "function", "name": "F", "line": 3, "sig": "func F()"}],
        "total_nodes": 2, "total_edges": 5, "truncated": False, "etag": "e1"},
       "GCX1 tool=get_file_summary fields=id,kind,name,line,sig etag=e1 total_edges=5 total_nodes=2 truncated=false\n"
       "a.go::F\tfunction\tF\t3\tfunc F()\n")
layout("007_get_callers", "get_callers", ".nodes (meta total, truncated) then .edges (meta count)",
       {"nodes": [{"id": "a.go::F", "kind": "function", "name": "F", "path": "a.go", "line": 3},
                  {"id": "b.go::G", "kind": "method", "name": "G", "path": "b.go", "line": 9}],
        "edges": [{"from": "b.go::G", "to": "a.go::F", "kind": "calls", "origin": "ast_resolved", "confidence": N("0.8"), "label": "likely"}],
        "total": 2, "truncated": False, "count": 1},
       "GCX1 tool=get_callers.nodes fields=id,kind,name,path,line total=2 truncated=false\n"
       "a.go::F\tfunction\tF\ta.go\t3\nb.go::G\tmethod\tG\tb.go\t9\n"
       "GCX1 tool=get_callers.edges fields=from,to,kind,origin,confidence,label count=1\n"
       "b.go::G\ta.go::F\tcalls\tast_resolved\t0.8\tlikely\n")
layout("008_find_implementations_no_edges", "find_implementations", "an empty .edges section is still written",
       {"nodes": [{"id": "i.go::Reader", "kind": "interface", "name": "Reader", "path": "i.go", "line": 1}], "edges": [],
        "total": 1, "truncated": True, "count": 0},
       "GCX1 tool=find_implementations.nodes fields=id,kind,name,path,line total=1 truncated=true\n"
       "i.go::Reader\tinterface\tReader\ti.go\t1\n"
       "GCX1 tool=find_implementations.edges fields=from,to,kind,origin,confidence,label count=0\n")
layout("009_get_editing_context", "get_editing_context", "four sections: target, callers, dependencies, tests",
       {"target": {"id": "a.go::F", "kind": "function", "name": "F", "path": "a.go", "start_line": 3, "end_line": 9, "sig": "func F()", "etag": "e"},
        "callers": [{"id": "b.go::G", "kind": "function", "name": "G", "path": "b.go", "line": 1}],
        "dependencies": [],
        "tests": [{"path": "a_test.go"}]},
       "GCX1 tool=get_editing_context.target fields=id,kind,name,path,start_line,end_line,sig,etag\n"
       "a.go::F\tfunction\tF\ta.go\t3\t9\tfunc F()\te\n"
       "GCX1 tool=get_editing_context.callers fields=id,kind,name,path,line\nb.go::G\tfunction\tG\tb.go\t1\n"
       "GCX1 tool=get_editing_context.dependencies fields=id,kind,name,path,line\n"
       "GCX1 tool=get_editing_context.tests fields=path\na_test.go\n")
layout("010_smart_context", "smart_context", ".task (one row) and .symbols",
       {"task": "fix the login bug", "symbols": [
           {"id": "auth.go::Login", "kind": "function", "name": "Login", "path": "auth.go", "line": 12, "score": N("0.875"), "reason": "name match"}]},
       "GCX1 tool=smart_context.task fields=task\nfix the login bug\n"
       "GCX1 tool=smart_context.symbols fields=id,kind,name,path,line,score,reason\n"
       "auth.go::Login\tfunction\tLogin\tauth.go\t12\t0.875\tname match\n")
layout("011_smart_context_empty_task", "smart_context", "an empty task is no section (an empty one-column row would be skipped)",
       {"symbols": []},
       "GCX1 tool=smart_context.symbols fields=id,kind,name,path,line,score,reason\n")
layout("012_analyze_dead_code", "analyze.dead_code", "meta count", {"items": [
           {"id": "a.go::old", "kind": "function", "name": "old", "path": "a.go", "line": 40, "reason": "no callers"}], "count": 1},
       "GCX1 tool=analyze.dead_code fields=id,kind,name,path,line,reason count=1\na.go::old\tfunction\told\ta.go\t40\tno callers\n")
layout("013_analyze_hotspots", "analyze.hotspots", "meta count; the score keeps its lexeme", {"items": [
           {"id": "s.go::Serve", "name": "Serve", "path": "s.go", "line": 5, "fan_in": 12, "fan_out": 30, "cross_cut": 3, "score": N("1234567.5")}], "count": 1},
       "GCX1 tool=analyze.hotspots fields=id,name,path,line,fan_in,fan_out,cross_cut,score count=1\ns.go::Serve\tServe\ts.go\t5\t12\t30\t3\t1234567.5\n")
layout("014_analyze_cycles", "analyze.cycles", "nodes comma-joined", {"items": [
           {"size": 3, "severity": "high", "nodes": ["pkg/a", "pkg/b", "pkg/c"]}], "count": 1},
       "GCX1 tool=analyze.cycles fields=size,severity,nodes count=1\n3\thigh\tpkg/a,pkg/b,pkg/c\n")
layout("015_contracts_list", "contracts.list", "providers and consumers comma-joined; an empty list is []", {"contracts": [
           {"id": "http:GET:/users", "type": "http", "method": "GET", "path": "/users", "service": "api",
            "providers": ["api/users.go::List"], "consumers": ["web/a.ts::load", "cli/u.go::run"]},
           {"id": "grpc:Ping", "type": "grpc", "method": "Ping", "service": "health", "providers": [], "consumers": []}]},
       "GCX1 tool=contracts.list fields=id,type,method,path,service,providers,consumers\n# 2 contract(s)\n"
       "http:GET:/users\thttp\tGET\t/users\tapi\tapi/users.go::List\tweb/a.ts::load,cli/u.go::run\n"
       "grpc:Ping\tgrpc\tPing\t\thealth\t[]\t[]\n")
layout("016_contracts_orphans", "contracts.orphans", "contract sides without a counterpart", {"orphans": [
           {"contract_id": "http:GET:/old", "side": "consumer", "repo": "web", "symbol": "web/a.ts::old"}]},
       "GCX1 tool=contracts.orphans fields=contract_id,side,repo,symbol rows=1\nhttp:GET:/old\tconsumer\tweb\tweb/a.ts::old\n")
layout("017_search_symbols_extra_meta", "search_symbols", "further meta are members of the JSON form and sorted into the header",
       {"results": [], "total": 0, "truncated": False, "etag": "x1", "ms": 12},
       "GCX1 tool=search_symbols fields=id,kind,name,path,line,sig etag=x1 ms=12 total=0 truncated=false\n# 0 result(s)\n")
layout("018_cycle_node_with_comma", "analyze.cycles", "a node a comma list cannot carry: the list travels as a JSON array",
       {"items": [{"size": 2, "severity": "low", "nodes": ["a,b", ""]}], "count": 1},
       "GCX1 tool=analyze.cycles fields=size,severity,nodes count=1\n2\tlow\t[\"a,b\",\"\"]\n")
layout("019_empty_test_path", "get_editing_context", "an empty test path is JSON text (a one-column row cannot be empty)",
       {"target": {"id": "a", "kind": "f", "name": "A", "path": "a.go", "start_line": 1, "end_line": 1},
        "callers": [], "dependencies": [], "tests": [{"path": ""}]},
       "GCX1 tool=get_editing_context.target fields=id,kind,name,path,start_line,end_line,sig,etag\na\tf\tA\ta.go\t1\t1\t\t\n"
       "GCX1 tool=get_editing_context.callers fields=id,kind,name,path,line\n"
       "GCX1 tool=get_editing_context.dependencies fields=id,kind,name,path,line\n"
       "GCX1 tool=get_editing_context.tests fields=path types=v\n\"\"\n")
layout("020_later_columns_in_gortex_order", "search_symbols", "columns the seed lacks are written in Gortex's order",
       {"results": [{"id": "a", "kind": "function", "name": "A", "path": "a.go", "path_abs": "/r/a.go", "line": 3, "is_test": True}],
        "total": 1, "truncated": False},
       "GCX1 tool=search_symbols fields=id,kind,name,path,path_abs,line,sig,is_test total=1 truncated=false\n# 1 result(s)\n"
       "a\tfunction\tA\ta.go\t/r/a.go\t3\t\ttrue\n")

write("layouts/decode_001_later_search_symbols_columns", "later_search_symbols_columns",
      "Gortex writes 13 search_symbols columns today: the later ones are kept, typed", "decode-layout",
      layout="search_symbols",
      input="GCX1 tool=search_symbols fields=id,kind,name,path,path_abs,line,sig,enclosing,is_test,test_role,test_runner,type_flavor,ui_component total=1 truncated=false\n"
            "# 1 result(s)\na.go::F\tfunction\tF\ta.go\t/r/a.go\t3\tfunc F()\t\tfalse\t\t\t\t\n",
      expected={"results": [{"id": "a.go::F", "kind": "function", "name": "F", "path": "a.go", "line": 3, "sig": "func F()",
                             "path_abs": "/r/a.go", "is_test": False}], "total": 1, "truncated": False})
write("layouts/decode_002_graph_with_later_sub_sections", "graph_with_later_sub_sections",
      "Gortex appends .caller_notes and .boundaries sections; they are kept as members", "decode-layout",
      layout="get_dependents",
      input="GCX1 tool=get_dependents.nodes fields=id,kind,name,path,line total=0 truncated=false\n"
            "GCX1 tool=get_dependents.edges fields=from,to,kind,origin,confidence,label count=0\n"
            "GCX1 tool=get_dependents.caller_notes fields=id count=1\nx\n",
      expected={"nodes": [], "edges": [], "total": 0, "truncated": False, "count": 0, "caller_notes": [{"id": "x"}]})
write("layouts/decode_003_symbol_source_crlf_tolerant", "symbol_source_crlf_tolerant",
      "a payload with CRLF line endings decodes", "decode-layout", layout="get_symbol_source",
      input="GCX1 tool=get_symbol_source fields=id,kind,name,path,start_line,end_line,from_line,sig,etag,source etag=e\r\n"
            "a\tf\tA\ta.go\t1\t2\t1\t\te\tx\\ty\r\n",
      expected={"id": "a", "kind": "f", "name": "A", "path": "a.go", "start_line": 1, "end_line": 2, "from_line": 1, "etag": "e", "source": "x\ty"})
write("layouts/decode_004_missing_total_is_absent", "missing_total_is_absent",
      "Gortex's golden get_callers has no `total`: missing meta is an absent member, never an error", "decode-layout",
      layout="get_callers",
      input="GCX1 tool=get_callers.nodes fields=id,kind,name,path,line truncated=false\na\tfunction\tA\ta.go\t3\n"
            "GCX1 tool=get_callers.edges fields=from,to,kind,origin,confidence,label count=0\n",
      expected={"nodes": [{"id": "a", "kind": "function", "name": "A", "path": "a.go", "line": 3}], "edges": [], "truncated": False, "count": 0})
write("layouts/decode_005_edges_with_tier_and_via", "edges_with_tier_and_via",
      "Gortex's edges today: tier, via, line and file_path after the seed's columns", "decode-layout",
      layout="get_call_chain",
      input="GCX1 tool=get_call_chain.nodes fields=id,kind,name,path,path_abs,line,is_test,test_role,test_runner total=0 truncated=false\n"
            "GCX1 tool=get_call_chain.edges fields=from,to,kind,origin,tier,via,confidence,label,line,file_path count=1\n"
            "a\tb\tcalls\tlsp_dispatch\tlsp\tinterface\t0.9\tlikely\t12\ta.go\n",
      expected={"nodes": [], "edges": [{"from": "a", "to": "b", "kind": "calls", "origin": "lsp_dispatch", "tier": "lsp", "via": "interface",
                                        "confidence": N("0.9"), "label": "likely", "line": 12, "file_path": "a.go"}],
                "total": 0, "truncated": False, "count": 1})
write("layouts/decode_006_bare_rows", "bare_rows",
      "a layout's section without meta is its rows", "decode-layout", layout="analyze.dead_code",
      input="GCX1 tool=analyze.dead_code fields=id,line\na\t1\nb\t2\n",
      expected={"items": [{"id": "a", "line": 1}, {"id": "b", "line": 2}]})

lerr = [
    ("002_symbol_source_two_rows", "get_symbol_source",
     "GCX1 tool=get_symbol_source fields=id,kind,name,path,start_line,end_line,from_line,sig,etag,source etag=e\na\tf\tA\ta\t1\t2\t1\t\te\t\nb\tf\tB\tb\t1\t2\t1\t\te\t\n", "row_count", pos(1, 1)),
    ("003_bad_line_number", "analyze.dead_code", "GCX1 tool=analyze.dead_code fields=id,kind,name,path,line,reason count=1\na\tf\tA\ta.go\tten\tunused\n", "invalid_value", pos(2, 12)),
    ("004_wrong_section", "find_usages", "GCX1 tool=search_symbols fields=id total=0 truncated=false\n", "unexpected_section", pos(1, 1)),
    ("005_missing_column", "analyze.hotspots", "GCX1 tool=analyze.hotspots fields=id,name count=1\na\tA\n", "type_mismatch", pos(2, 1)),
    ("006_trailing_foreign_section", "analyze.cycles", "GCX1 tool=analyze.cycles fields=size,severity,nodes count=0\nGCX1 tool=other fields=a\n", "unexpected_section", pos(2, 1)),
    ("007_bad_truncated_flag", "get_file_summary", "GCX1 tool=get_file_summary fields=id,kind,name,line,sig etag=e total_edges=0 total_nodes=0 truncated=maybe\n", "type_mismatch", None),
]
for n, name, text, code, p in lerr:
    kw = dict(layout=name, input=text, expected_error=code)
    if p:
        kw["position"] = p
    write("layouts/err_" + n, n[4:], f"decoding {name} fails with {code}", "decode-layout-error", **kw)

# ---------------------------------------------------------------- workspace shapes
layout("100_tool_definitions_sorted", "tool_definitions", "rows in ascending byte order of name, no meta",
       [{"name": "search_symbols", "scope": "fan-out"}, {"name": "get_symbol_source", "scope": "repo"},
        {"name": "list_repos", "scope": "workspace"}, {"name": "Zeta", "scope": "repo"}],
       "GCX1 tool=tool_definitions fields=name,scope\nZeta\trepo\nget_symbol_source\trepo\nlist_repos\tworkspace\nsearch_symbols\tfan-out\n",
       decodes_to=[{"name": "Zeta", "scope": "repo"}, {"name": "get_symbol_source", "scope": "repo"},
                   {"name": "list_repos", "scope": "workspace"}, {"name": "search_symbols", "scope": "fan-out"}])
layout("101_tool_request_repo", "tool_request", "scope repo: a plain repo name",
       {"tool": "get_symbol_source", "scope": "repo", "repo": "gortex"},
       "GCX1 tool=tool_request fields=tool,scope,repo\nget_symbol_source\trepo\tgortex\n")
layout("102_tool_request_workspace", "tool_request", "scope workspace: an empty repo cell",
       {"tool": "list_repos", "scope": "workspace"}, "GCX1 tool=tool_request fields=tool,scope,repo\nlist_repos\tworkspace\t\n")
layout("103_tool_request_fan_out_all", "tool_request", "scope fan-out: the [\"*\"] sentinel",
       {"tool": "search_symbols", "scope": "fan-out", "repo": ["*"]}, "GCX1 tool=tool_request fields=tool,scope,repo\nsearch_symbols\tfan-out\t[\"*\"]\n")
layout("104_tool_request_fan_out_subset", "tool_request", "scope fan-out: a compact JSON array of names",
       {"tool": "search_symbols", "scope": "fan-out", "repo": ["gortex", "gortex-cloud"]},
       "GCX1 tool=tool_request fields=tool,scope,repo\nsearch_symbols\tfan-out\t[\"gortex\",\"gortex-cloud\"]\n")
layout("105_error_missing_repo_list", "error", "the error envelope, code missing_repo_list",
       {"code": "missing_repo_list", "message": "fan-out tool needs a repo list", "detail": ""},
       "GCX1 tool=error fields=code,message,detail\nmissing_repo_list\tfan-out tool needs a repo list\t\n")
layout("106_error_unknown_repo", "error", "the error envelope, code unknown_repo, with escapes in the detail",
       {"code": "unknown_repo", "message": "not in this workspace", "detail": "gortex-old\tretired"},
       "GCX1 tool=error fields=code,message,detail\nunknown_repo\tnot in this workspace\tgortex-old\\tretired\n")
layout("107_tool_request_fan_out_names_escaped", "tool_request", "JSON in the cell uses Go's escapes, then the row escapes",
       {"tool": "t", "scope": "fan-out", "repo": ["a<b", "c\\d"]},
       "GCX1 tool=tool_request fields=tool,scope,repo\nt\tfan-out\t[\"a\\\\u003cb\",\"c\\\\\\\\d\"]\n")

werr = [
    ("decode", "200_definitions_unknown_scope", "tool_definitions", "GCX1 tool=tool_definitions fields=name,scope\nsearch\tglobal\n", "schema", pos(2, 8)),
    ("decode", "201_definitions_empty_scope", "tool_definitions", "GCX1 tool=tool_definitions fields=name,scope\nsearch\t\n", "schema", pos(2, 8)),
    ("decode", "202_definitions_missing_column", "tool_definitions", "GCX1 tool=tool_definitions fields=name,scope\nsearch\n", "schema", pos(2, 7)),
    ("decode", "203_request_fan_out_not_json", "tool_request", "GCX1 tool=tool_request fields=tool,scope,repo\nt\tfan-out\tgortex,cloud\n", "schema", pos(2, 11)),
    ("decode", "204_request_star_with_names", "tool_request", "GCX1 tool=tool_request fields=tool,scope,repo\nt\tfan-out\t[\"*\",\"a\"]\n", "schema", None),
    ("decode", "205_request_workspace_with_repo", "tool_request", "GCX1 tool=tool_request fields=tool,scope,repo\nt\tworkspace\tgortex\n", "schema", None),
    ("decode", "206_request_repo_empty", "tool_request", "GCX1 tool=tool_request fields=tool,scope,repo\nt\trepo\t\n", "schema", None),
    ("decode", "207_request_two_rows", "tool_request", "GCX1 tool=tool_request fields=tool,scope,repo\nt\trepo\ta\nu\trepo\tb\n", "row_count", None),
    ("decode", "208_error_empty_code", "error", "GCX1 tool=error fields=code,message,detail\n\tmessage\t\n", "schema", None),
    ("decode", "209_definitions_duplicate_name", "tool_definitions", "GCX1 tool=tool_definitions fields=name,scope\na\trepo\na\tworkspace\n", "schema", pos(3, 1)),
    ("decode", "210_request_fan_out_empty_list", "tool_request", "GCX1 tool=tool_request fields=tool,scope,repo\nt\tfan-out\t[]\n", "schema", None),
]
for kind, n, name, text, code, p in werr:
    kw = dict(layout=name, input=text, expected_error=code)
    if p:
        kw["position"] = p
    write("layouts/err_" + n, n[4:], f"decoding {name} fails with {code}", "decode-layout-error", **kw)
write("layouts/err_211_definitions_duplicate_on_encode", "definitions_duplicate_on_encode", "a tool defined twice", "encode-layout-error",
      layout="tool_definitions", input=[{"name": "a", "scope": "repo"}, {"name": "a", "scope": "repo"}], expected_error="schema")
write("layouts/err_212_error_empty_code_on_encode", "error_empty_code_on_encode", "code must be non-empty", "encode-layout-error",
      layout="error", input={"code": "", "message": "m", "detail": ""}, expected_error="schema")

ws = ["gortex", "gortex-cloud", "web"]
calls = [
    ("300_repo_ok", "repo", "gortex", {"scope": "repo", "repo": "gortex"}, None),
    ("301_repo_missing", "repo", "ABSENT", None, "missing_repo"),
    ("302_repo_empty", "repo", "", None, "missing_repo"),
    ("303_repo_unknown", "repo", "other", None, "unknown_repo"),
    ("304_repo_given_a_list", "repo", ["gortex"], None, "wrong_repo_shape"),
    ("305_workspace_ok", "workspace", "ABSENT", {"scope": "workspace"}, None),
    ("306_workspace_null_is_absent", "workspace", None, {"scope": "workspace"}, None),
    ("307_workspace_with_repo", "workspace", "gortex", None, "repo_not_allowed"),
    ("308_workspace_with_list", "workspace", ["*"], None, "repo_not_allowed"),
    ("309_fan_out_star", "fan-out", ["*"], {"scope": "fan-out", "repo": ws}, None),
    ("310_fan_out_subset_deduplicated", "fan-out", ["web", "gortex", "web"], {"scope": "fan-out", "repo": ["web", "gortex"]}, None),
    ("311_fan_out_missing", "fan-out", "ABSENT", None, "missing_repo_list"),
    ("312_fan_out_empty_list", "fan-out", [], None, "missing_repo_list"),
    ("313_fan_out_string", "fan-out", "gortex", None, "wrong_repo_shape"),
    ("314_fan_out_star_with_names", "fan-out", ["*", "web"], None, "wrong_repo_shape"),
    ("315_fan_out_unknown_name", "fan-out", ["gortex", "nope"], None, "unknown_repo"),
    ("316_fan_out_non_string", "fan-out", ["gortex", 7], None, "wrong_repo_shape"),
    ("317_repo_number", "repo", 7, None, "wrong_repo_shape"),
]
for n, scope, repo, expected, code in calls:
    kw = dict(scope=scope, workspace=ws)
    if repo != "ABSENT":
        kw["repo"] = repo
    if expected is not None:
        kw["expected"] = expected
    else:
        kw["expected_error"] = code
    desc = f"scope {scope}, repo {'absent' if repo == 'ABSENT' else json.dumps(repo)}: " + (json.dumps(expected) if expected else code)
    write("workspace/" + n, n[4:], desc, "check-call", **kw)

formats = [("001_gcx", "gcx", "gcx"), ("002_gcx1_trimmed_upper", "  GCX1 ", "gcx"), ("003_text", "text", "text"),
           ("004_compact", "Compact", "text"), ("005_json", "json", "json"), ("006_empty", "", "json"), ("007_unknown", "toon", "json"),
           ("008_gcx2_is_json", "gcx2", "json")]
for n, inp, out in formats:
    write("format/" + n, n[4:], f"parse_format({inp!r}) is {out}", "parse-format", input=inp, expected=out)

print(COUNT, "fixtures")
