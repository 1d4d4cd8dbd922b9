import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/** The longest positional parameter list core allows; past it, a function takes an options object. */
const MAX_POSITIONAL_PARAMETERS = 4;

const REPOSITORY_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CORE_SOURCES = join(REPOSITORY_ROOT, "packages/core/src");
/** Core's worker-thread modules, plain JavaScript that runs without a build. */
const CORE_WORKER = join(REPOSITORY_ROOT, "packages/core/worker");
const SOURCE_FILE = /\.(ts|mts|js|mjs)$/;

/** What a parameter list belongs to, as a finding names it. */
function kindOf(node: ts.SignatureDeclaration): string {
  if (ts.isConstructorDeclaration(node) || ts.isConstructSignatureDeclaration(node)) return "constructor";
  if (ts.isMethodDeclaration(node) || ts.isMethodSignature(node)) return "method";
  if (ts.isArrowFunction(node)) return "arrow function";
  if (ts.isFunctionTypeNode(node) || ts.isConstructorTypeNode(node)) return "function type";
  if (ts.isCallSignatureDeclaration(node)) return "call signature";
  return "function";
}

/** The name a finding gives a function: its own, its class's for a constructor, or its variable's. */
function nameOf(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  const parent = node.parent;
  if (ts.isConstructorDeclaration(node) && ts.isClassLike(parent)) {
    return parent.name?.text ?? "(anonymous class)";
  }
  if (node.name !== undefined) return node.name.getText(source);
  // An unnamed function takes the name of what it is assigned to, when it is assigned.
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent) ||
    ts.isTypeAliasDeclaration(parent)
  ) {
    return parent.name.getText(source);
  }
  return "(anonymous)";
}

/** Every TypeScript and JavaScript file under `directory`, recursively. */
function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && SOURCE_FILE.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/**
 * `file:line kind name (n parameters)` for every function-like declaration of `path` with more
 * than {@link MAX_POSITIONAL_PARAMETERS} parameters. A rest parameter counts as one; a `this`
 * parameter is a type annotation, not a positional argument, and does not count. Signatures in
 * types (interface methods, function types) count too: they are lists someone must implement.
 */
function findLongParameterLists(path: string, text = readFileSync(path, "utf8")): string[] {
  const kind = /\.m?js$/.test(path) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const findings: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node)) {
      const positional = node.parameters.filter(
        (parameter) => !(ts.isIdentifier(parameter.name) && parameter.name.text === "this"),
      );
      if (positional.length > MAX_POSITIONAL_PARAMETERS) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
        findings.push(
          `${relative(REPOSITORY_ROOT, path)}:${line + 1} ${kindOf(node)} ${nameOf(node, source)} ` +
            `(${positional.length} parameters)`,
        );
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

describe("positional parameter lists in @skillbox/core", () => {
  it(`finds lists longer than ${MAX_POSITIONAL_PARAMETERS} of every function-like shape`, () => {
    // The check itself: each shape below has five parameters, except where it says otherwise.
    const sample = [
      "function declared(a, b, c, d, e) {}",
      "const arrow = (a, b, c, d, e) => a;",
      "const expression = function (a, b, c, d, e) {};",
      "class Shape {",
      "  constructor(private a: number, b, c, d, e) {}",
      "  method(a, b, c, d, e) {}",
      "}",
      "interface Port { call(a, b, c, d, e): void; }",
      "type Callback = (a, b, c, d, e) => void;",
      "function rest(a, b, c, ...others: unknown[]) {}", // four: a rest parameter is one
      "function typed(this: Shape, a, b, c, d) {}", // four: `this` is no argument
      "function four(a, b, c, d) {}",
      "const port = { handle(a, b, c, d, e) {}, nested: () => [1].map((a, b, c, d, e) => a) };",
    ].join("\n");
    const findings = findLongParameterLists(join(CORE_SOURCES, "sample.ts"), sample);
    expect(findings).toEqual([
      "packages/core/src/sample.ts:1 function declared (5 parameters)",
      "packages/core/src/sample.ts:2 arrow function arrow (5 parameters)",
      "packages/core/src/sample.ts:3 function expression (5 parameters)",
      "packages/core/src/sample.ts:5 constructor Shape (5 parameters)",
      "packages/core/src/sample.ts:6 method method (5 parameters)",
      "packages/core/src/sample.ts:8 method call (5 parameters)",
      "packages/core/src/sample.ts:9 function type Callback (5 parameters)",
      "packages/core/src/sample.ts:13 method handle (5 parameters)",
      "packages/core/src/sample.ts:13 arrow function (anonymous) (5 parameters)",
    ]);
    // Plain JavaScript (the worker's modules) is read as well.
    const script = findLongParameterLists(
      join(CORE_WORKER, "sample.mjs"),
      "export function run(a, b, c, d, e) {}",
    );
    expect(script).toEqual(["packages/core/worker/sample.mjs:1 function run (5 parameters)"]);
  });

  it(`has no function, method, constructor or arrow function with more than ${MAX_POSITIONAL_PARAMETERS} parameters`, () => {
    const files = [...sourceFiles(CORE_SOURCES), ...sourceFiles(CORE_WORKER)];
    expect(files.some((file) => file.endsWith("skill-executor.ts"))).toBe(true);
    expect(files.some((file) => file.endsWith("skill-worker.mjs"))).toBe(true);
    const findings = files.flatMap((file) => findLongParameterLists(file));
    expect(
      findings,
      `take an options object instead of more than ${MAX_POSITIONAL_PARAMETERS} positional parameters:\n${findings.join("\n")}`,
    ).toEqual([]);
  });
});
