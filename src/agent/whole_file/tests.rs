//! The whole-file way's readings of replies, files and changes, each on real text.

use super::*;
use super::{changes::*, handed::*, judge::*, line::*, reply::*, selection::*};
use crate::agent::code_text::*;

fn handed_file(path: &str, text: &str) -> HandedFile {
    let path = WorkspacePath { abs: path.into(), rel: path.to_string(), real_rel: path.to_string() };
    HandedFile::whole(path, text.to_string())
}

fn shown(path: Option<&str>, text: &str) -> ShownFile {
    ShownFile { path: path.map(str::to_string), text: text.to_string() }
}

#[test]
fn a_sentence_that_quotes_one_path_and_introduces_a_block_labels_it() {
    let reply = "The tests:\n\nHere's the updated `test_slug.py` with the tests:\n```python\nX = 1\n```\n\n\
                 It reads `a.py` and `b.py`:\n```\nY = 2\n```\n\nSee `c.py`.\n```\nZ = 3\n```\n";
    assert_eq!(
        shown_files(reply),
        [shown(Some("test_slug.py"), "X = 1\n"), shown(None, "Y = 2\n"), shown(None, "Z = 3\n")]
    );
}

#[test]
fn a_block_belongs_to_the_path_before_it_or_in_its_first_line() {
    let reply = "Here it is.\n\n**calc.py**\n```python\ndef add(a, b):\n    return a + b\n```\n\n\
                 ```\n# lib/util.py\nX = 1\n```\n\n```\nno path\n```\n";
    assert_eq!(
        shown_files(reply),
        vec![
            shown(Some("calc.py"), "def add(a, b):\n    return a + b\n"),
            shown(Some("lib/util.py"), "X = 1\n"),
            shown(None, "no path\n"),
        ]
    );
}

#[test]
fn a_fences_language_on_the_line_below_it_is_not_code() {
    let reply = "mathutil.py\n```\npython\ndef is_even(n):\n    return n % 2 == 0\n```\n";
    assert_eq!(shown_files(reply), vec![shown(Some("mathutil.py"), "def is_even(n):\n    return n % 2 == 0\n")]);
    let word_alone = "notes.txt\n```\njson\n```\n";
    assert_eq!(shown_files(word_alone), vec![shown(Some("notes.txt"), "json\n")]);
}

#[test]
fn a_sentence_before_a_block_is_not_its_path_and_a_cut_block_counts() {
    let reply = "To fix it, change main.py as follows.\n```\nprint(1)\n";
    assert_eq!(shown_files(reply), vec![shown(None, "print(1)\n")]);
}

#[test]
fn a_block_that_holds_only_a_path_heads_the_next() {
    let reply = "```\napp.py\n```\n```\nX = 1\n```\n";
    assert_eq!(shown_files(reply), vec![shown(Some("app.py"), "X = 1\n")]);
}

#[test]
fn one_block_holding_several_handed_files_is_cut_at_each_path() {
    let handed = [handed_file("shop/text.py", ""), handed_file("tests/test_shop.py", "")];
    let reply = "```python\n# shop/text.py\nimport re\n\n# tests/test_shop.py\nfrom shop.text import slugify\n```\n";
    assert_eq!(
        blocks_for(reply, &handed),
        vec![
            shown(Some("shop/text.py"), "import re\n"),
            shown(Some("tests/test_shop.py"), "from shop.text import slugify\n")
        ]
    );
    // A comment naming a file that was not handed over is code.
    let reply = "```python\n# shop/text.py\nimport re\n\n# see docs/slugs.md\nX = 1\n```\n";
    assert_eq!(blocks_for(reply, &handed).len(), 1);
}

#[test]
fn a_reply_that_is_a_line_number_is_read_as_one() {
    assert_eq!(line_number("line 3"), Some(3));
    assert_eq!(line_number("13\n"), Some(13));
    assert_eq!(line_number("`Line 7.`"), Some(7));
    assert_eq!(line_number("It is line 12 that needs to change."), Some(12));
    assert_eq!(line_number("Test slug.py, line 17"), Some(17));
    assert_eq!(line_number("Line 3 or line 4."), None, "two lines named");
    assert_eq!(line_number("Line 3 reads `n = 1`."), None, "code with it");
    assert_eq!(line_number("return 3"), None);
    let file = "function f(user) {\n  return !user.on;\n}\n\nfunction g() {\n  return 1;\n}\n";
    let quoted_line = |reply| quoted_code(reply).and_then(|quoted| line_reading(file, &quoted));
    assert_eq!(quoted_line("```javascript\nreturn !user.on;\n```\n"), Some(2));
    assert_eq!(quoted_line("The line is `return !user.on;`."), Some(2));
    assert_eq!(quoted_line("```\n}\n```"), None, "two lines read so");
    assert_eq!(quoted_line("```\nreturn !user.off;\n```"), None, "no line reads so");
    assert_eq!(line_number("0"), None);
}

#[test]
fn a_remark_under_a_code_file_is_no_content_but_a_heading_of_prose_is() {
    let reply = "```python\n# shop/models.py\n# No changes needed\n```\n```\n# README.md\n# Shop\n```\n";
    assert_eq!(shown_files(reply), vec![shown(Some("README.md"), "# Shop\n")]);
}

#[test]
fn the_files_sharing_the_rarest_words_of_a_prompt_are_the_most_relevant() {
    let texts = [
        "def slugify(title):\n    \"\"\"The URL slug of a title: lowercase words.\"\"\"\n",
        "class Cart:\n    \"\"\"A cart of products.\"\"\"\n",
        "def tax(amount):\n    return amount * 0.07\n",
    ];
    let scores = relevance("Product URLs keep capital letters of titles; they must be lowercase.", texts.into_iter());
    assert!(scores[0] > scores[1] && scores[1] > 0.0 && scores[2] == 0.0, "{scores:?}");
    assert!(relevance("Fix it.", texts.into_iter()).iter().all(|score| *score == 0.0));
}

#[test]
fn new_code_alone_is_an_addition_and_a_version_is_not() {
    let file = "def add(a, b):\n    return a + b\n";
    assert!(is_new_code(file, "def subtract(a, b):\n    return a - b\n"));
    assert!(!is_new_code(file, "def add(a, b):\n    return a - b\n"));
    assert!(!is_new_code(file, "app.py\n"));
}

#[test]
fn only_code_that_declares_what_the_prompt_asks_for_is_new() {
    let file = "def add(a, b):\n    return a + b\n";
    let prompt = "Add a function subtract(a, b) to calc.py.";
    assert!(introduces_asked_name(prompt, file, "def subtract(a, b):\n    return a - b\n"));
    // A call of what exists, or a name the prompt does not use.
    assert!(!introduces_asked_name("How do I call add?", file, "x = add(1, 2)\nprint(x)\n"));
    assert!(!introduces_asked_name(prompt, file, "def minus(a, b):\n    return a - b\n"));
    assert!(!introduces_asked_name("Add subtraction.", file, "def subtract(a, b):\n    return a - b\n"));
}

#[test]
fn a_block_with_every_line_changed_is_a_version_when_it_declares_what_the_file_does() {
    let file = "def greet(name):\n    return \"Hello, \" + name + \"!\"\n";
    let version = "def greet(name, greeting=\"Hello\"):\n    return greeting + \", \" + name + \"!\"\n";
    assert!(whole_version_likeness(file, version).is_some());
    assert_eq!(whole_version_likeness(file, &format!("\n{file}")), None);
    // New code beside the file's declares another name.
    let calc = "def add(a, b):\n    return a + b\n";
    assert_eq!(whole_version_likeness(calc, "def subtract(a, b):\n    return a - b\n"), None);
    // A part of a larger file is not the file.
    let two = format!("{file}\n\ndef part(name):\n    return name[:1]\n");
    assert_eq!(whole_version_likeness(&two, version), None);
    // Nor is other code of about the same size.
    assert_eq!(whole_version_likeness("import os\nprint(os.getcwd())\n", "x = [1, 2]\ny = sum(x)\n"), None);
    // The file shown without its head deletes nothing; without its
    // last line it does.
    let orders = "\"\"\"Orders.\"\"\"\n\nfrom shop.tax import tax\n\n\nclass Order:\n    def __init__(self, subtotal):\n        \
                  self.subtotal = subtotal\n\n    def total(self):\n        return tax(self.subtotal)\n\n    \
                  def paid(self):\n        return True\n";
    let without_head = orders.split_once("\n\n\n").unwrap().1;
    assert_eq!(whole_version_likeness(orders, without_head), None);
    assert!(headless(orders, without_head), "a copy, but for its head");
    assert!(!headless(orders, orders.split_once("class").unwrap().0), "the head alone is no copy");
    let without_last = orders.trim_end().rsplit_once('\n').unwrap().0;
    assert!(whole_version_likeness(orders, without_last).is_some());
}

#[test]
fn the_code_a_sentence_quotes_is_the_line() {
    assert_eq!(inline_code("Line 7 should be `return math.sqrt(x)`"), "return math.sqrt(x)");
    assert_eq!(inline_code("`x = 1`"), "x = 1");
    assert_eq!(inline_code("    return a + b"), "    return a + b");
    // An unclosed backtick quotes nothing.
    assert_eq!(inline_code("Line 7 should be `return x"), "Line 7 should be `return x");
}

#[test]
fn a_line_without_its_closing_colon_is_no_fix() {
    assert_eq!(words_changed("    if total <= LIMIT:", "if total <= LIMIT"), None);
    assert_eq!(words_changed("let x = 1;", "let x = 1"), None);
    assert_eq!(words_changed("    if total <= LIMIT:", "if total >= LIMIT:"), Some(1));
}

#[test]
fn a_fixed_line_keeps_the_indentation_and_the_closing_of_the_line_it_replaces() {
    assert_eq!(as_line_of("    if len(text) <= limit:", "if len(text) < limit"), "    if len(text) < limit:");
    assert_eq!(as_line_of("\tx := f(a);", "x := f(b);"), "\tx := f(b);");
    assert_eq!(as_line_of("  } else {", "} else if (x) {"), "  } else if (x) {");
    assert_eq!(as_line_of("    return a + b", "return a - b"), "    return a - b");
}

#[test]
fn an_import_of_one_name_for_another_renames_it_and_an_alias_does_not() {
    let old = "from config import load_config";
    assert_eq!(renamed_import(old, "from config import read_config"), Some(("load_config", "read_config")));
    assert_eq!(renamed_import(old, "from config import read_config as load_config"), None);
    assert_eq!(renamed_import(old, "from config import load_config, read_config"), None);
    assert_eq!(renamed_import("x = load_config()", "x = read_config()"), None);
}

#[test]
fn a_name_is_used_by_code_not_by_a_comment_or_a_docstring() {
    let text = "\"\"\"Reads events; read_csv_events is gone.\"\"\"\n\n\
                def load(path):\n    \"\"\"Not read_csv_events:\n    read_events.\"\"\"\n\
                \x20   # read_csv_events was here\n    return RECIPES[path]\n";
    assert!(!code_uses(text, "read_csv_events"));
    assert!(code_uses(text, "RECIPES"));
    let names = top_level_names("RECIPES = {\nconst LIMIT = 3;\nif x == 1:\n    y = 2\ndef load(path):\n");
    let mut names: Vec<&str> = names.into_iter().collect();
    names.sort_unstable();
    assert_eq!(names, ["LIMIT", "RECIPES", "load"]);
}

#[test]
fn a_file_name_with_one_letter_wrong_still_names_it() {
    assert!(one_edit_apart("trip.py", "trips.py"));
    assert!(one_edit_apart("trips.py", "trips.py"));
    assert!(one_edit_apart("tripz.py", "trips.py"));
    assert!(!one_edit_apart("trip.py", "strips.py"));
    assert!(!one_edit_apart("geo.py", "trips.py"));
}

#[test]
fn a_line_fix_changes_a_few_words_of_a_line() {
    assert_eq!(words_changed("    return n % 2 == 1", "return n % 2 == 0"), Some(1));
    assert_eq!(words_changed("  return ids.length;", "return ids.length + 1;"), Some(2));
    assert_eq!(words_changed("def top_words(text, n=5):", "return top_words(text, n=5):"), None);
    assert_eq!(words_changed("def top_words(text, n=5):", "def top_words(text, n=10):"), Some(1));
    assert_eq!(words_changed("    if total > 100:", "if total >= 100:"), Some(1));
    assert_eq!(words_changed("import os", "import math"), None, "half the line is another line");
    assert_eq!(words_changed("x = 1", "x = 1"), None, "no change");
    let negated = "  return !user.prefs.emailNotifications;";
    assert_eq!(words_changed(negated, "return user.prefs.emailNotifications;"), Some(1), "a `!` dropped");
    assert_eq!(words_changed(negated, "return user.email;"), None, "another line");
    let message = "errors.push('Password must be at least 8 characters long.');";
    assert_eq!(words_changed("    errors.push('Password too short.');", message), Some(1), "a message said anew");
    assert_eq!(words_changed("    \"\"\"The rate.\"\"\"", "\"\"\"The rate of tax.\"\"\""), None, "a docstring");
    assert_eq!(words_changed("print('a', 'b')", "print('a', 'b', 'c')"), None, "code added between quotes");
    assert_eq!(words_changed("def greet(name):", "print(greet(\"world\"))"), None);
    assert_eq!(words_changed("    return total", "return total + tax"), Some(2), "an addition keeps the line");
    assert_eq!(words_changed("x = 1", "x = compute(a, b, c) + 1"), None, "more than doubled is another line");
    assert_eq!(
        words_changed("  title=$(grep -m1 '^# ' $f | sed 's/^# //')", "grep -m1 '^# ' $f | sed 's/^# //'"),
        None,
        "a quote"
    );
    assert_eq!(words_changed("    return total + shipping + 1", "return total + shipping"), Some(2), "the end dropped");
    assert_eq!(
        words_changed("        distance_km(a[\"lon\"], a[\"lat\"])", "distance_km(a[\"lat\"], a[\"lon\"])"),
        Some(2),
        "operands swapped"
    );
}

#[test]
fn a_change_that_only_adds_imports_nothing_uses_is_a_copy() {
    let stock = "def in_stock(item, stock):\n    return stock.get(item, 0) > 1\n";
    let unused = format!("from collections import defaultdict\n\n{stock}");
    assert!(adds_only_unused_imports(stock, &unused));
    let js = "function f(a) {\n  return a;\n}\n";
    assert!(adds_only_unused_imports(js, &format!("const fs = require(\"fs\");\n{js}")));
    // An import the code uses, a line changed with it, lines reordered:
    // changes.
    let uses = "def root(x):\n    return math.sqrt(x)\n";
    assert!(!adds_only_unused_imports(uses, &format!("import math\n{uses}")));
    let fixed = unused.replace("> 1", ">= 1");
    assert!(!adds_only_unused_imports(stock, &fixed));
    assert!(!adds_only_unused_imports("a = 1\nb = 2\n", "import os\nb = 2\na = 1\n"));
    assert!(!adds_only_unused_imports(stock, stock));
}

#[test]
fn a_reply_that_ends_before_the_file_does_is_a_copy_unless_removal_is_asked() {
    let playlist = "function total(ids) {\n  return ids.length;\n}\n\nmodule.exports = { total };\n\n\
                    if (require.main === module) {\n  console.log(total([1]));\n}\n";
    let short = "function total(ids) {\n  return ids.length;\n}\n\nmodule.exports = { total };\n";
    assert!(stops_short(playlist, short));
    // One line dropped is a change as likely as a lapse; a fix above the
    // cut, the whole file kept, or nothing kept at all are no lapse.
    assert!(!stops_short("a = 1\nb = 2\n", "a = 1\n"));
    assert!(!stops_short(playlist, &short.replace("length", "length + 1")));
    assert!(!stops_short(playlist, playlist));
    assert!(!stops_short(playlist, "\n"));
    // A request that speaks of what goes asks for it gone.
    assert!(speaks_of_change("Drop the console.log at the end of playlist.js.", playlist, short));
    assert!(!speaks_of_change("totalDuration in playlist.js returns NaN. Can you fix it?", playlist, short));
}

#[test]
fn declared_names_are_read_across_languages() {
    let text = "class Rectangle:\n    def area(self):\nfunction capitalize(word) {\npub fn main() {\nx = 1\n";
    let names = declared_names(text);
    assert_eq!(names, ["Rectangle", "capitalize", "main"].into_iter().collect());
    assert_eq!(declared_name("export default function capitalize(word) {"), Some("capitalize"));
    assert_eq!(declared_name("pub(crate) struct Cache {"), Some("Cache"));
    assert_eq!(declared_name("    \"\"\"The type checker runs here.\"\"\""), None);
    assert_eq!(declared_name("# a class of its own"), None);
}

#[test]
fn an_import_goes_after_the_last_import_or_below_the_head_of_the_file() {
    assert_eq!(
        with_import("import os\nimport sys\n\nX = 1\n", "import math"),
        "import os\nimport sys\nimport math\n\nX = 1\n"
    );
    assert_eq!(
        with_import("def f():\n    return math.pi\n", "import math"),
        "import math\n\ndef f():\n    return math.pi\n"
    );
    assert_eq!(
        with_import("#!/usr/bin/env python3\n\"\"\"Stats.\n\nMore.\n\"\"\"\n\ndef f():\n    pass\n", "import math"),
        "#!/usr/bin/env python3\n\"\"\"Stats.\n\nMore.\n\"\"\"\n\nimport math\n\ndef f():\n    pass\n"
    );
    assert_eq!(
        with_import("from a import (\n    b,\n)\nX = b\n", "import math"),
        "from a import (\n    b,\n)\nimport math\nX = b\n"
    );
    // An import inside a function is not the file's.
    assert_eq!(with_import("def f():\n    import os\n", "import math"), "import math\n\ndef f():\n    import os\n");
}

#[test]
fn new_files_beside_a_fix_that_nothing_uses_are_unasked() {
    let text = "def slugify(title):\n    return title\n";
    let handed = [handed_file("shop/text.py", text)];
    let edit =
        |path: &str, new: &str| ("Edit", serde_json::json!({"file_path": path, "old_string": "x", "new_string": new}));
    let write = |path: &str, content: &str| ("Write", serde_json::json!({"file_path": path, "content": content}));
    let exists = |path: &str| path == "shop/text.py";
    let fix = edit("shop/text.py", "    return title.lower()");
    let views = write("shop/views.py", "from .models import Product\n");
    let models = write("shop/models.py", "class Product:\n    pass\n");
    // views.py uses models.py, but nothing uses views.py: both are unasked.
    let changes = [fix, views.clone(), models];
    let fix_it = "Product URLs keep capital letters. Fix it.";
    assert_eq!(unasked_new_files(fix_it, &changes, &handed, exists), ["shop/views.py", "shop/models.py"]);
    // Unless the request speaks of them.
    let asked = "Add a Product model and a view for it.";
    assert!(unasked_new_files(asked, &changes, &handed, exists).is_empty());
    // A new module the fix imports is part of it.
    let uses = edit("shop/text.py", "from shop.casing import lower\n");
    let casing = write("shop/casing.py", "def lower(s):\n    return s.lower()\n");
    assert!(unasked_new_files(fix_it, &[uses, casing], &handed, exists).is_empty());
    // New files alone are the change.
    assert!(unasked_new_files(fix_it, &[views], &handed, exists).is_empty());
    assert!(speaks_of_file("The test is wrong.", "test_pricing.py"));
    assert!(speaks_of_file("Fix test_pricing.py.", "test_pricing.py"));
    assert!(!speaks_of_file("Prices are wrong.", "test_pricing.py"), "pricing is no price");
}

#[test]
fn the_answer_a_worked_out_reply_ends_with() {
    let reply = "MAX_RETRIES = 7\nrange(MAX_RETRIES + 1) makes 8 attempts: the first and 7 retries.\n\nAnswer: 7\n";
    assert_eq!(answer_line(reply).as_deref(), Some("7"));
    assert_eq!(answer_line("Steps…\n**Answer:** `write_bundle`").as_deref(), Some("`write_bundle`"));
    assert_eq!(answer_line("The answer: it retries 7 times."), None);
    assert_eq!(answer_line("Answer:\n"), None);
}

#[test]
fn an_import_line_is_added_only_to_the_one_file_that_uses_it() {
    let stats = handed_file("stats.py", "def sd(xs):\n    return math.sqrt(xs)\n");
    let main = handed_file("main.py", "from stats import sd\nprint(sd([1]))\n");
    let current: Vec<(&HandedFile, String)> = vec![(&stats, stats.text.clone()), (&main, main.text.clone())];
    let lines = |reply: &str| reply.lines().map(str::to_string).collect::<Vec<_>>();
    let (name, input) = added_import(&current, &lines("import math")).expect("an Edit");
    assert_eq!(name, "Edit");
    assert_eq!(input["file_path"], "stats.py");
    assert_eq!(input["new_string"], "import math\n\ndef sd(xs):\n    return math.sqrt(xs)\n");
    // Nothing uses it, or it is there already: no edit.
    assert!(added_import(&current, &lines("import json")).is_none());
    assert!(added_import(&current[1..], &lines("from stats import sd")).is_none());
    // Not an import at all.
    assert!(added_import(&current, &lines("math.sqrt(xs)")).is_none());
}

#[test]
fn the_part_of_a_long_file_is_the_declaration_of_a_name_asked_about() {
    let python = "class Cart:\n    @property\n    def total(self):\n        return 1\n\n    def tax(self):\n        \
                  return 2\n\n\ndef other():\n    pass\n";
    let (part, at) = declaring_part(python, &["total"]).expect("a part");
    assert_eq!(part, "    @property\n    def total(self):\n        return 1\n");
    assert_eq!(at, Part { first: 2, total: 11, name: "total".to_string() });
    let js = "const a = 1;\n\nfunction maxOf(xs) {\n  let best = xs[0];\n  return best;\n}\n\nfunction f() {}\n";
    let (part, at) = declaring_part(js, &["maxOf"]).expect("a part");
    assert_eq!(part, "function maxOf(xs) {\n  let best = xs[0];\n  return best;\n}\n");
    assert_eq!(at.first, 3);
    // A name used but not declared has no part.
    assert_eq!(declaring_part(python, &["Order"]), None);
}

#[test]
fn a_word_is_replaced_whole_and_a_rename_is_one_declaration_renamed() {
    assert_eq!(replace_word("f(f_x, xf, f) # f", "f", "g"), "g(f_x, xf, g) # g");
    assert_eq!(replace_word("ff", "f", "g"), "ff");
    let handed = [handed_file("cart.py", "def calc(a):\n    return a\n")];
    let edit = |new: &str| {
        ("Edit", serde_json::json!({"file_path": "cart.py", "old_string": "def calc(a):", "new_string": new}))
    };
    let renamed = |new: &str| renames(&[changed_file(&edit(new), &handed).expect("a change")], &handed);
    assert_eq!(renamed("def total(a):"), vec![("calc".to_string(), "total".to_string())]);
    // Its parameters changed too: no mere rename.
    assert!(renamed("def total(a, b):").is_empty());
}

#[test]
fn a_code_comment_is_not_a_path() {
    assert_eq!(comment_path("# Seconds to wait for the server."), None);
    assert_eq!(comment_path("// main.rs"), Some("main.rs".into()));
    assert_eq!(path_in("File: `src/app.py`:"), Some("src/app.py".into()));
    assert_eq!(path_in("app.py is fixed."), None);
}

#[test]
fn a_change_to_comments_and_docstrings_alone_is_no_change_to_code() {
    let module = "\"\"\"Reading events.\n\nMore.\n\"\"\"\nimport csv\n\n\ndef read(path):\n    \"\"\"Rows of path.\"\"\"\n    return list(csv.reader(open(path)))  # all of them\n";
    let docstring_split = module.replacen("\"\"\"Reading events.", "\"\"\"\nReading events.", 1);
    assert!(comments_only_differ("events.py", module, &docstring_split));
    let commented = module.replace("    return list", "    # Read it all.\n    return  list");
    assert!(comments_only_differ("events.py", module, &commented), "a comment added, spacing changed");
    let fixed = module.replace("list(csv.reader", "list(csv.DictReader");
    assert!(!comments_only_differ("events.py", module, &fixed));
    assert!(!comments_only_differ("events.py", module, module), "no change at all is a copy, not this");
    // A print commented out is a change to the code.
    let script = "x = 1\nprint(x)\n";
    assert!(!comments_only_differ("run.py", script, "x = 1\n# print(x)\n"));
    // A string assigned is code, not a docstring.
    let assigned = "HELP = \"\"\"\nusage\n\"\"\"\n";
    assert!(!comments_only_differ("cli.py", assigned, &assigned.replace("usage", "Usage")));
    let rust = "//! Helpers.\n\npub fn one() -> u8 {\n    1\n}\n";
    assert!(comments_only_differ("src/lib.rs", rust, &rust.replace("//!", "///")));
    assert!(!comments_only_differ("src/lib.rs", rust, &rust.replace("    1", "    2")));
    // Where comments are not known, every change counts.
    assert!(!comments_only_differ("notes.md", "# A\n", "# B\n"));
    // Unless the request speaks of what the comments say.
    let reworded = module.replace("Rows of", "Records of");
    assert!(speaks_of_change("The docstring of read says Rows; make it say Records.", module, &reworded));
    assert!(!speaks_of_change("Fix read.", module, &commented));
}

#[test]
fn only_the_parts_kept_are_left_out_of_changes() {
    let handed = [handed_file("app.ini", "[web]\nlevel = INFO\n[worker]\nlevel = INFO\n")];
    let both: Change = (
        "Edit",
        serde_json::json!({ "file_path": "app.ini", "old_string": "INFO\n[worker]\nlevel = INFO", "new_string": "DEBUG\n[worker]\nlevel = DEBUG" }),
    );
    let new_file: Change = ("Write", serde_json::json!({ "file_path": "web.md", "content": "web\n" }));
    let (changes, spared) = spare_kept(vec![both.clone(), new_file.clone()], &handed, &["web".to_string()]);
    assert_eq!(changes[0].1["new_string"], "[web]\nlevel = INFO\n[worker]\nlevel = DEBUG\n");
    assert_eq!(changes[1], new_file, "a new file has no part to keep");
    assert_eq!(spared[0].1, ["web"]);
    assert_eq!(spare_kept(vec![both.clone()], &handed, &[]).0, [both]);
}

#[test]
fn a_reply_of_code_blocks_alone_says_nothing_in_words() {
    assert!(only_code("```python\nlisten_address()\n```\n"));
    assert!(!only_code("It listens on 8000:\n```python\n\"port\": 8000,\n```\n"));
    assert!(!only_code("8000"));
}

#[test]
fn of_many_files_the_one_to_ask_for_declares_what_the_prompt_names_or_has_most_to_do_with_it() {
    let test = "from shop.text import slugify\n\n\ndef test_slug():\n    assert slugify(\"A B\") == \"a-b\"\n";
    let handed = [
        handed_file("shop/cart.py", "class Cart:\n    \"\"\"Products to buy.\"\"\"\n"),
        handed_file("shop/orders.py", "class Order:\n    def total(self):\n        return 1\n"),
        handed_file(
            "shop/shipping.py",
            "def shipping_cost(subtotal):\n    \"\"\"Orders of 50 or more ship free.\"\"\"\n",
        ),
        handed_file("shop/text.py", "def slugify(title):\n    return \"-\".join(title.split())\n"),
        handed_file("tests/test_shop.py", test),
    ];
    let copy = format!("```python\n{test}```\n");
    let paths = |files: Vec<&HandedFile>| files.iter().map(|f| f.path.rel.clone()).collect::<Vec<_>>();
    // The test copied back: of four others, the one that declares slugify.
    let (echoed, asked) = overlooked(&copy, "slugify keeps capital letters. Fix it.", &handed, &[]).expect("others");
    assert_eq!(paths(asked), ["shop/text.py"]);
    assert!(echoed.is_empty(), "picked from many, the file is shown alone");
    // Named by none: the one that shares the prompt's rarest words.
    let (_, asked) =
        overlooked(&copy, "Big orders should ship free but are charged. Fix it.", &handed, &[]).expect("others");
    assert_eq!(paths(asked), ["shop/shipping.py"]);
    // Nothing to tell them apart: no file to ask for.
    assert!(overlooked(&copy, "It is broken. Fix it.", &handed, &[]).is_none());
    // The code the prompt names copied back: the README it names.
    let flag = [
        handed_file("README.md", "# cleanup\n\nOptions:\n- `--verbose`\n"),
        handed_file("cleanup.py", "import argparse\nparser.add_argument(\"--dry-run\")\n"),
    ];
    let cleanup = format!("```python\n{}```\n", flag[1].text);
    let prompt = "cleanup.py gained a --dry-run flag but the README doesn't mention it. Add it.";
    let (_, asked) = overlooked(&cleanup, prompt, &flag, &[]).expect("the README");
    assert_eq!(paths(asked), ["README.md"]);
    assert!(overlooked(&cleanup, "cleanup.py ignores --dry-run. Fix it.", &flag, &[]).is_none());
    // A test that fails until the change is made is no place for it.
    let two = [handed[0].clone(), handed[4].clone()];
    let cart = format!("```python\n{}```\n", handed[0].text);
    let prompt = "Big orders are charged. Fix it.";
    assert!(overlooked(&cart, prompt, &two, &[]).is_some());
    assert!(overlooked(&cart, prompt, &two, &["tests/test_shop.py".to_string()]).is_none());

    // A reply that changed nothing: the code file most to do with the
    // prompt, when the prompt and the reply name none.
    let prompt = "Big orders should ship free but are charged for shipping.";
    let asked = file_to_ask_for(prompt, "```\n```\n", &handed, &[]).expect("a file");
    assert_eq!(asked.path.rel, "shop/shipping.py");
    assert!(file_to_ask_for("Fix the bug.", "", &handed, &[]).is_none());
    // A reply that repeats which tests fail: not the test, but the code
    // the prompt has most to do with.
    let failing = ["tests/test_shop.py".to_string()];
    let repeated = "The change is not done: the tests in tests/test_shop.py fail.";
    assert_eq!(file_to_ask_for(prompt, repeated, &handed, &[]).expect("a file").path.rel, "tests/test_shop.py");
    let asked = file_to_ask_for(prompt, repeated, &handed, &failing).expect("a file");
    assert_eq!(asked.path.rel, "shop/shipping.py");
}

#[test]
fn the_function_shown_alone_is_the_one_the_prompt_names_else_the_one_the_reply_quotes() {
    let text = "import re\n\n\ndef slugify(title):\n    words = re.findall(r\"\\w+\", title)\n    return \"-\".join(words)\n\n\n\
                def excerpt(text, limit=80):\n    if len(text) <= limit:\n        return text\n    return text[:limit]\n";
    let file = handed_file("text.py", text);
    let part_name = |found: Option<HandedFile>| found.and_then(|f| f.part).map(|part| part.name);
    let quoted = "```python\ndef slugify(title):\n    words = re.findall(r\"\\w+\", title)\n```\n";
    let unnamed = "Product URLs keep capital letters. Fix it.";
    assert_eq!(part_name(asked_function(unnamed, quoted, &[&file])), Some("slugify".to_string()));
    // The prompt's name comes first.
    assert_eq!(part_name(asked_function("excerpt cuts too much.", quoted, &[&file])), Some("excerpt".to_string()));
    // A line that declares nothing points at no function.
    assert_eq!(part_name(asked_function(unnamed, "return \"-\".join(words)", &[&file])), None);
}

#[test]
fn a_change_that_drops_what_the_file_declares_is_unmeant_unless_the_request_names_it() {
    let text = "function truncate(str, max) {\n  return str.slice(0, max);\n}\n\nfunction wordCount(str) {\n  return str.split(' ').length;\n}\n\nmodule.exports = { truncate, wordCount };\n";
    // The 0.5B's text.js: wordCount and the exports made a test.
    let tested = text.split_once("function wordCount").unwrap().0.to_string()
        + "function testTruncate() {\n  console.log(truncate('abc', 2));\n}\n";
    let fix = "Fix truncate.";
    assert_eq!(dropped_declarations(fix, text, &tested), Some(vec!["wordCount".to_string()]));
    // Only a removal the request names is meant.
    assert_eq!(dropped_declarations("Remove wordCount: nothing calls it.", text, &tested), None);
    assert_eq!(dropped_declarations("wordCount is dead weight: fold it into truncate.", text, &tested), None);
    // Renamed, or kept, a declaration is not dropped.
    let renamed = text.replace("wordCount", "countWords");
    assert_eq!(dropped_declarations(fix, text, &renamed), None);
    assert_eq!(dropped_declarations(fix, text, &text.replace("max);", "max - 1);")), None);
}

#[test]
fn a_new_python_file_imports_what_it_calls_from_the_one_file_that_defines_it() {
    let slug =
        "import re\n\n\ndef slugify(title):\n    return re.sub(r\"[^a-z0-9]+\", \"-\", title.lower()).strip(\"-\")\n";
    let cart = "TAX = 0.2\n\n\nclass Cart:\n    def total(self):\n        return 0\n";
    let handed =
        [handed_file("slug.py", slug), handed_file("shop/cart.py", cart), handed_file("notes.md", "slugify\n")];
    let tests = "\"\"\"Tests.\"\"\"\nimport pytest\n\n\ndef test_plain():\n    assert slugify(\"Hello World\") == \"hello-world\"\n    \
                 assert Cart().total() == 0 and TAX\n";
    let imported = with_homes_imported("test_slug.py", tests, &handed);
    assert_eq!(
        imported,
        "\"\"\"Tests.\"\"\"\nimport pytest\nfrom shop.cart import Cart, TAX\nfrom slug import slugify\n\n\ndef test_plain():\n    \
         assert slugify(\"Hello World\") == \"hello-world\"\n    assert Cart().total() == 0 and TAX\n"
    );
    // A name no handed file defines, or two define, leaves the file as it is.
    let unknown = "def test_it():\n    assert parse_date('x')\n";
    assert_eq!(with_homes_imported("test_dates.py", unknown, &handed), unknown);
    let twice = [handed_file("slug.py", slug), handed_file("old/slug.py", slug)];
    assert_eq!(with_homes_imported("test_slug.py", tests, &twice), tests);
}
