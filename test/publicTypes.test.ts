/**
 * Every named type a user meets in the public API can be named by the user: each
 * interface, type alias, class or enum declared in src/ that the exports of the
 * package's entry points reach (through parameters, return types, properties,
 * heritage, type arguments, … and on through those types, as their declaration
 * files show them: private members and bodies left out, inferred types included)
 * is exported by name from one of the entry points. So is each value of src/ a
 * signature names with `typeof`. Checked on the sources with one TypeScript
 * program (no build needed).
 */

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const src = `${root}src/`;

/** The entry points of package.json's "exports", each with the source it is built from. */
function entryPoints(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as {
    exports: Record<string, string | { types: string }>;
  };
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === "string") continue;
    const m = /^\.\/dist\/(.*)\.d\.ts$/.exec(target.types);
    if (!m) throw new Error(`${subpath}: types ${target.types} is not under dist/`);
    entries.set(`weft${subpath.slice(1)}`, `${src}${m[1]}.ts`);
  }
  return entries;
}

function program(rootNames: string[]): ts.Program {
  const config = ts.readConfigFile(`${root}tsconfig.json`, ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return ts.createProgram({ rootNames, options: { ...options, noEmit: true } });
}

const NAMED = ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class;
const NAMED_ANY = NAMED | ts.SymbolFlags.Enum;

function inSrc(node: ts.Node): boolean {
  return node.getSourceFile().fileName.startsWith(src);
}

/** The declarations of `s` in the project (not in a library or Node.js's types). */
function srcDeclarations(s: ts.Symbol): ts.Declaration[] {
  return (s.declarations ?? []).filter(inSrc);
}

/** A private class member: a declaration file shows its name only. */
function isHidden(node: ts.Node): boolean {
  if (!ts.isClassElement(node)) return false;
  if (node.name && ts.isPrivateIdentifier(node.name)) return true;
  return (ts.getCombinedModifierFlags(node as ts.Declaration) & ts.ModifierFlags.Private) !== 0;
}

/**
 * The named types declared in src/ (and the values of src/ named by `typeof`) that
 * the exports of `entries` reach, each with the path that first reached it, and the
 * symbols the entries export.
 */
function publicTypes(entries: Map<string, string>): {
  reached: Map<ts.Symbol, string>;
  exported: Set<ts.Symbol>;
} {
  const prog = program([...entries.values()]);
  const checker = prog.getTypeChecker();
  const resolve = (s: ts.Symbol): ts.Symbol =>
    s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;

  const exported = new Set<ts.Symbol>();
  const reached = new Map<ts.Symbol, string>();
  const walkedSymbols = new Set<ts.Symbol>();
  const walkedTypes = new Set<ts.Type>();
  let path = "";

  /**
   * A symbol named in a signature: a named type of src/ is reached and walked, and
   * so is a value named by `typeof` (a declaration file writes `typeof value`).
   */
  function reach(symbol: ts.Symbol | undefined, byTypeof = false): void {
    if (!symbol) return;
    const s = resolve(symbol);
    const member = s.flags & ts.SymbolFlags.EnumMember ? s.valueDeclaration : undefined;
    if (member && ts.isEnumMember(member)) {
      reach(checker.getSymbolAtLocation(member.parent.name));
      return;
    }
    if (!srcDeclarations(s).length) return;
    if ((byTypeof || s.flags & NAMED_ANY) && !reached.has(s)) reached.set(s, path);
    walkSymbol(s);
  }

  function walkSymbol(s: ts.Symbol): void {
    if (walkedSymbols.has(s)) return;
    walkedSymbols.add(s);
    const outer = path;
    path = `${outer} → ${s.name}`;
    for (const d of srcDeclarations(s)) walkDeclaration(d);
    path = outer;
  }

  /** What a declaration file shows of `node`: its types, not its bodies or initializers. */
  function walkDeclaration(node: ts.Node): void {
    if (isHidden(node)) return;
    if (ts.isHeritageClause(node)) {
      for (const t of node.types) walkTypeNode(t);
      return;
    }
    if (ts.isFunctionLike(node)) {
      if ("body" in node && node.body && checker.isImplementationOfOverload(node)) return;
      node.typeParameters?.forEach(walkDeclaration);
      for (const p of node.parameters) walkDeclaration(p);
      if (node.type) walkTypeNode(node.type);
      else if (!ts.isConstructorDeclaration(node) && !ts.isSetAccessorDeclaration(node)) {
        const sig = checker.getSignatureFromDeclaration(node);
        if (sig) walkType(checker.getReturnTypeOfSignature(sig));
      }
      return;
    }
    if (ts.isTypeNode(node)) {
      walkTypeNode(node);
      return;
    }
    if (
      ts.isVariableDeclaration(node) ||
      ts.isPropertyDeclaration(node) ||
      ts.isParameter(node) ||
      ts.isPropertySignature(node) ||
      ts.isPropertyAssignment(node) ||
      ts.isShorthandPropertyAssignment(node)
    ) {
      if ("type" in node && node.type) walkTypeNode(node.type);
      else walkType(checker.getTypeAtLocation(node.name));
      return;
    }
    if (ts.isTypeParameterDeclaration(node)) {
      if (node.constraint) walkTypeNode(node.constraint);
      if (node.default) walkTypeNode(node.default);
      return;
    }
    if (ts.isExportAssignment(node)) walkType(checker.getTypeAtLocation(node.expression));
    else if (
      ts.isClassDeclaration(node) ||
      ts.isClassExpression(node) ||
      ts.isInterfaceDeclaration(node) ||
      ts.isTypeAliasDeclaration(node) ||
      ts.isModuleDeclaration(node) ||
      ts.isModuleBlock(node) ||
      ts.isEnumDeclaration(node) ||
      ts.isVariableStatement(node) ||
      ts.isVariableDeclarationList(node)
    ) {
      ts.forEachChild(node, walkDeclaration);
    }
  }

  /** A type as written: every name in it is reached. */
  function walkTypeNode(node: ts.Node): void {
    if (ts.isTypeReferenceNode(node)) reach(checker.getSymbolAtLocation(node.typeName));
    else if (ts.isExpressionWithTypeArguments(node)) {
      reach(checker.getSymbolAtLocation(node.expression));
    } else if (ts.isTypeQueryNode(node)) {
      reach(checker.getSymbolAtLocation(node.exprName), true);
    } else if (ts.isImportTypeNode(node)) {
      reach(node.qualifier && checker.getSymbolAtLocation(node.qualifier));
    } else if (
      ts.isPropertySignature(node) ||
      ts.isMethodSignature(node) ||
      ts.isCallSignatureDeclaration(node) ||
      ts.isConstructSignatureDeclaration(node) ||
      ts.isIndexSignatureDeclaration(node) ||
      ts.isFunctionTypeNode(node) ||
      ts.isConstructorTypeNode(node) ||
      ts.isTypeParameterDeclaration(node) ||
      ts.isParameter(node)
    ) {
      walkDeclaration(node);
      return;
    } else {
      ts.forEachChild(node, walkTypeNode);
      return;
    }
    // A named type's arguments: `Map<string, TaskState>`, `extends Base<Options>`.
    node.typeArguments?.forEach(walkTypeNode);
  }

  /** A type no one wrote (an inferred one): what its declaration-file text would name. */
  function walkType(type: ts.Type): void {
    if (walkedTypes.has(type)) return;
    walkedTypes.add(type);
    if (type.aliasSymbol) {
      reach(type.aliasSymbol);
      type.aliasTypeArguments?.forEach(walkType);
      return;
    }
    if (type.isUnionOrIntersection()) {
      type.types.forEach(walkType);
      return;
    }
    if (type.flags & ts.TypeFlags.EnumLiteral) {
      reach(type.symbol);
      return;
    }
    if (type.flags & ts.TypeFlags.TypeParameter) return;
    if (type.flags & (ts.TypeFlags.Index | ts.TypeFlags.IndexedAccess | ts.TypeFlags.Conditional)) {
      const t = type as ts.Type & Partial<Record<"type" | "objectType" | "indexType", ts.Type>>;
      const c = type as ts.Type & Partial<Record<"checkType" | "extendsType", ts.Type>>;
      for (const part of [t.type, t.objectType, t.indexType, c.checkType, c.extendsType]) {
        if (part) walkType(part);
      }
      return;
    }
    if (!(type.flags & ts.TypeFlags.Object)) return;
    const object = type as ts.ObjectType;
    if (object.objectFlags & ts.ObjectFlags.Reference) {
      const ref = object as ts.TypeReference;
      if (ref.target !== ref) {
        checker.getTypeArguments(ref).forEach(walkType);
        walkType(ref.target);
        return;
      }
    }
    const symbol = type.symbol;
    if (object.objectFlags & (ts.ObjectFlags.Class | ts.ObjectFlags.Interface)) {
      reach(symbol);
      return;
    }
    // `typeof SomeClass`, `typeof someFunction`: named, and walked from their declarations.
    if (symbol && symbol.flags & (NAMED | ts.SymbolFlags.Function | ts.SymbolFlags.Enum)) {
      const declared = symbol.valueDeclaration;
      reach(symbol, !!declared && ts.isFunctionDeclaration(declared));
      return;
    }
    // An anonymous object or function type: walked where declared in src/.
    if (symbol && !srcDeclarations(symbol).length && symbol.declarations?.length) return;
    for (const p of checker.getPropertiesOfType(type)) {
      const decls = srcDeclarations(p);
      if (decls.length) decls.forEach(walkDeclaration);
      else if (!p.declarations?.length) walkType(checker.getTypeOfSymbol(p));
    }
    for (const sig of [...type.getCallSignatures(), ...type.getConstructSignatures()]) {
      if (sig.declaration && inSrc(sig.declaration)) walkDeclaration(sig.declaration);
      else {
        for (const p of sig.parameters) walkType(checker.getTypeOfSymbol(p));
        walkType(sig.getReturnType());
      }
    }
    for (const info of checker.getIndexInfosOfType(type)) walkType(info.type);
  }

  const modules = [...entries].map(([name, file]) => {
    const sf = prog.getSourceFile(file);
    const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
    if (!moduleSymbol) throw new Error(`${name}: no module at ${file}`);
    return [name, checker.getExportsOfModule(moduleSymbol)] as const;
  });
  for (const [, exports] of modules) for (const e of exports) exported.add(resolve(e));
  for (const [name, exports] of modules) {
    for (const e of exports) {
      path = name;
      reach(e);
    }
  }
  return { reached, exported };
}

describe("the public API's types", () => {
  it("are all exported by name from an entry point", () => {
    const { reached, exported } = publicTypes(entryPoints());
    const missing = [...reached]
      .filter(([s]) => !exported.has(s))
      .map(([s, via]) => {
        const file = (s.declarations?.[0]?.getSourceFile().fileName ?? "").slice(root.length);
        const name = s.flags & NAMED_ANY ? s.name : `typeof ${s.name}`;
        return `${name} (${file}), reached by ${via}`;
      })
      .sort();
    expect(reached.size).toBeGreaterThan(200);
    // Export each from the entry point whose API names it (`export type` for types).
    expect(missing).toEqual([]);
  }, 60_000);
});

describe("the client's errors", () => {
  it("are all exported from weft: a thrown class is caught by name (instanceof), though no signature names it", async () => {
    const errors = await import("../src/client/errors.ts");
    const weft = (await import("../src/client/index.ts")) as Record<string, unknown>;
    const classes = Object.entries(errors).filter(([, v]) => typeof v === "function");
    expect(classes.length).toBeGreaterThan(15);
    expect(classes.filter(([name, v]) => weft[name] !== v).map(([name]) => name)).toEqual([]);
  });
});
