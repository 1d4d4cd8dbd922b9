import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

/** One error code a source file raises, where it raises it. */
export interface RaisedErrorCode {
  code: string;
  /** `path:line`, relative to the root the files were found under. */
  at: string;
}

/** Functions whose first argument is an error code, besides `new SkillboxError(code, …)`. */
const CODE_TAKING_FUNCTIONS: ReadonlySet<string> = new Set(["usageError"]);

/** An error code as Skillbox writes them: `UPPER_SNAKE_CASE`. */
const CODE_PATTERN = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;

/** `error_code = 'X'` in SQL: a code the store writes itself. */
const SQL_CODE = /error_code\s*=\s*'([A-Z][A-Z0-9_]*)'/g;

/** Every `.ts` file under `directory`, recursively, outside `node_modules`, `dist` and `test`. */
export function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((path) => !/[\\/](node_modules|dist|test)[\\/]/.test(relative(directory, path)))
    .sort();
}

/** The string literals an expression can evaluate to: through `?:`, `??`, `||`, parentheses and `as`. */
function literalsOf(expression: ts.Expression): string[] {
  if (ts.isStringLiteral(expression) || ts.isNoSubstitutionTemplateLiteral(expression))
    return [expression.text];
  if (
    ts.isParenthesizedExpression(expression) ||
    ts.isAsExpression(expression) ||
    ts.isSatisfiesExpression(expression)
  ) {
    return literalsOf(expression.expression);
  }
  if (ts.isConditionalExpression(expression)) {
    return [...literalsOf(expression.whenTrue), ...literalsOf(expression.whenFalse)];
  }
  if (
    ts.isBinaryExpression(expression) &&
    (expression.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken ||
      expression.operatorToken.kind === ts.SyntaxKind.BarBarToken)
  ) {
    return [...literalsOf(expression.left), ...literalsOf(expression.right)];
  }
  return [];
}

/** The string literal types of a type node (`"A" | "B"`). */
function literalTypesOf(type: ts.TypeNode): string[] {
  if (ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal)) return [type.literal.text];
  if (ts.isUnionTypeNode(type)) return type.types.flatMap(literalTypesOf);
  if (ts.isParenthesizedTypeNode(type)) return literalTypesOf(type.type);
  return [];
}

function isNamedCode(name: ts.PropertyName | ts.BindingName): boolean {
  return (ts.isIdentifier(name) || ts.isStringLiteral(name)) && name.text === "code";
}

/**
 * The error codes `text` raises: the first argument of `new SkillboxError(…)` and of
 * {@link CODE_TAKING_FUNCTIONS}, the value of every `code:` property and `code` variable, the
 * literal types of a `code` property or parameter, and `error_code = '…'` in SQL. Only
 * `UPPER_SNAKE_CASE` literals count; a code passed on from a variable (`error.code`) is not a
 * new one.
 */
export function findRaisedErrorCodes(
  path: string,
  root: string,
  text = readFileSync(path, "utf8"),
): RaisedErrorCode[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: RaisedErrorCode[] = [];
  const add = (codes: string[], node: ts.Node) => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    for (const code of codes) {
      if (CODE_PATTERN.test(code)) found.push({ code, at: `${relative(root, path)}:${line + 1}` });
    }
  };
  const visit = (node: ts.Node): void => {
    if (
      ts.isNewExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === "SkillboxError"
    ) {
      const first = node.arguments?.[0];
      if (first !== undefined) add(literalsOf(first), first);
    } else if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      CODE_TAKING_FUNCTIONS.has(node.expression.text)
    ) {
      const first = node.arguments[0];
      if (first !== undefined) add(literalsOf(first), first);
    } else if (ts.isPropertyAssignment(node) && isNamedCode(node.name)) {
      add(literalsOf(node.initializer), node);
    } else if (ts.isVariableDeclaration(node) && isNamedCode(node.name) && node.initializer !== undefined) {
      add(literalsOf(node.initializer), node);
    } else if (
      (ts.isPropertySignature(node) || ts.isParameter(node) || ts.isPropertyDeclaration(node)) &&
      isNamedCode(node.name) &&
      node.type !== undefined
    ) {
      add(literalTypesOf(node.type), node);
    } else if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node)
    ) {
      add(
        [...node.text.matchAll(SQL_CODE)].map((match) => match[1] as string),
        node,
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
