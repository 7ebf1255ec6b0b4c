/**
 * Every public API has a doc comment: each declaration the package's entry points
 * export (following re-exports and aliases), and each public member of an exported
 * class or interface (property, method, accessor, constructor parameter property,
 * static or not, inherited ones included). A member whose doc TypeScript inherits
 * (an override of a documented base member, or a member implementing a documented
 * interface member) counts as documented. Checked on the sources with one
 * TypeScript program (no build needed).
 */

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const src = `${root}src/`;

/**
 * Declarations and members (`Owner.member`) that need no doc comment of their own,
 * each with why. (Type parameters and an Error subclass's `override name` are
 * skipped by rule, not listed here.)
 */
const EXEMPT = new Map<string, string>([]);

/**
 * Fields every wire message has, exempt in the message interfaces of
 * `src/protocol/messages*.ts` only: the headers of those modules say what they are
 * once, and a doc on each of ~70 messages would repeat it.
 */
const MESSAGE_FIELDS = new Map<string, string>([
  ["op", "the message's name (Dask's `op`): its literal type, which the message's doc explains"],
  ["stimulusId", "the ID of the stimulus that caused the message (Dask's `stimulus_id`)"],
  ["clientId", "the client a client→scheduler message comes from, or is about"],
]);

const MESSAGE_MODULE = /\/src\/protocol\/messages\w*\.ts$/;

/** A field of a wire message that {@link MESSAGE_FIELDS} exempts. */
function isCommonMessageField(decl: ts.Declaration): boolean {
  return (
    ts.isPropertySignature(decl) &&
    ts.isInterfaceDeclaration(decl.parent) &&
    MESSAGE_MODULE.test(decl.getSourceFile().fileName) &&
    MESSAGE_FIELDS.has(decl.name.getText())
  );
}

/** The sources of the entry points of package.json's "exports". */
function entrySources(): string[] {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as {
    exports: Record<string, string | { types: string }>;
  };
  const sources: string[] = [];
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === "string") continue;
    const m = /^\.\/dist\/(.*)\.d\.ts$/.exec(target.types);
    if (!m) throw new Error(`${subpath}: types ${target.types} is not under dist/`);
    sources.push(`${src}${m[1]}.ts`);
  }
  return sources;
}

function program(rootNames: string[]): ts.Program {
  const config = ts.readConfigFile(`${root}tsconfig.json`, ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return ts.createProgram({ rootNames, options: { ...options, noEmit: true } });
}

function inSrc(node: ts.Node): boolean {
  return node.getSourceFile().fileName.startsWith(src);
}

/** `src/…/file.ts:line`, where a report points the reader. */
function where(node: ts.Node): string {
  const file = node.getSourceFile();
  const { line } = file.getLineAndCharacterOfPosition(node.getStart());
  return `${file.fileName.slice(root.length)}:${line + 1}`;
}

/** Private, protected and `#private` members are not public API. */
function isNonPublic(decl: ts.Declaration): boolean {
  const name = ts.getNameOfDeclaration(decl);
  if (name && ts.isPrivateIdentifier(name)) return true;
  const flags = ts.getCombinedModifierFlags(decl);
  return (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !== 0;
}

/** Whether a class (by its instance type) derives from the global `Error`. */
function derivesFromError(checker: ts.TypeChecker, type: ts.Type): boolean {
  const seen = new Set<ts.Type>();
  const visit = (t: ts.Type): boolean => {
    if (seen.has(t)) return false;
    seen.add(t);
    const decl = t.getSymbol()?.declarations?.[0];
    if (t.getSymbol()?.name === "Error" && decl && !inSrc(decl)) return true;
    if (!t.isClassOrInterface()) return false;
    return checker.getBaseTypes(t).some(visit);
  };
  return visit(type);
}

/** An Error subclass's `override name`: the class's name, nothing to explain. */
function isErrorNameOverride(decl: ts.Declaration, errorClass: boolean): boolean {
  if (!errorClass || !ts.isPropertyDeclaration(decl)) return false;
  const overrides = (ts.getCombinedModifierFlags(decl) & ts.ModifierFlags.Override) !== 0;
  return overrides && decl.name.getText() === "name";
}

/** Each public API without a doc comment, as `name (src/file.ts:line)`. */
function undocumented(): string[] {
  const entries = entrySources();
  const prog = program(entries);
  const checker = prog.getTypeChecker();
  const hasDoc = (s: ts.Symbol): boolean =>
    ts.displayPartsToString(s.getDocumentationComment(checker)).trim() !== "";

  const missing: string[] = [];
  const seenExports = new Set<ts.Symbol>();
  const seenMembers = new Set<ts.Declaration>();

  const checkMembers = (owner: string, members: ts.Symbol[], errorClass: boolean): void => {
    for (const member of members) {
      const decls = (member.declarations ?? []).filter(inSrc);
      const first = decls[0];
      if (!first || seenMembers.has(first)) continue;
      seenMembers.add(first);
      if (decls.every(isNonPublic)) continue;
      if (decls.some((d) => isErrorNameOverride(d, errorClass))) continue;
      if (decls.every(isCommonMessageField)) continue;
      const name = `${owner}.${ts.getNameOfDeclaration(first)?.getText() ?? member.name}`;
      if (EXEMPT.has(name) || hasDoc(member)) continue;
      missing.push(`${name} (${where(first)})`);
    }
  };

  for (const entry of entries) {
    const file = prog.getSourceFile(entry);
    const moduleSymbol = file && checker.getSymbolAtLocation(file);
    if (!moduleSymbol) throw new Error(`${entry}: not a module in the program`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const s =
        exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (seenExports.has(s)) continue;
      seenExports.add(s);
      const decls = (s.declarations ?? []).filter(inSrc);
      if (decls.length === 0) continue;
      if (!EXEMPT.has(s.name) && !hasDoc(s)) missing.push(`${s.name} (${where(decls[0])})`);

      if (s.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface)) {
        const instance = checker.getDeclaredTypeOfSymbol(s);
        const errorClass =
          (s.flags & ts.SymbolFlags.Class) !== 0 && derivesFromError(checker, instance);
        checkMembers(s.name, checker.getPropertiesOfType(instance), errorClass);
      }
      if (s.flags & ts.SymbolFlags.Class) {
        const statics = checker.getPropertiesOfType(checker.getTypeOfSymbol(s));
        checkMembers(
          s.name,
          statics.filter((m) => m.name !== "prototype"),
          false,
        );
      }
    }
  }
  return missing;
}

describe("public API docs", () => {
  it("every exported declaration and public member has a doc comment", () => {
    const missing = undocumented();
    expect(missing, `${missing.length} without a doc comment:\n${missing.join("\n")}`).toEqual([]);
  });
});
