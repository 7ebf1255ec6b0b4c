/**
 * YAML parsed with its nesting bounded. The `yaml` package recurses once per
 * level of nested collections: its composer overflows the stack from about 790
 * levels of flow collections (`[[[…]]]`, `{a: {a: …}}`, JSON), its parser
 * from about 2,000 levels of block ones (closing them all at once). Watching
 * the parser's stack of open collections as it reads stops a document before.
 */

import { CST, Lexer, Parser } from "yaml";

/**
 * The syntax tree of the documents in `text`, as `new Parser(onNewLine).parse(text)`
 * yields them, but calling `tooDeep` with the offset of the first collection
 * opened deeper than `limit` below a document's top value (itself at depth 0,
 * as `normalizeTree` counts), as soon as it opens.
 */
export function* parseYamlNested(
  text: string,
  limit: number,
  tooDeep: (offset: number) => never,
  onNewLine?: (offset: number) => void,
): Generator<CST.Token> {
  const parser = new Parser(onNewLine);
  onNewLine?.(0);
  for (const lexeme of new Lexer().lex(text)) {
    yield* parser.next(lexeme);
    // stack[0] is the document, stack[d + 1] what is open at depth d.
    const deepest = parser.stack[limit + 2];
    if (deepest !== undefined && CST.isCollection(deepest)) tooDeep(deepest.offset);
  }
  yield* parser.end();
}
