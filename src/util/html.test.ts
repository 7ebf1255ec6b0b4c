import { describe, expect, it } from "vitest";
import {
  cssPercent,
  escapeHtml,
  Html,
  htmlPage,
  htmlTable,
  usageBar,
  wrappingText,
} from "./html.ts";

describe("the pages' HTML", () => {
  it("a usage bar fills with what is used of the limit, orange beyond 80%, red beyond it", () => {
    expect(usageBar(10, null, "x")).toBe("");
    expect(usageBar(25, 100, "25 of 100")).toContain("width:25%;background:#3b7dd8");
    expect(usageBar(90, 100, "")).toContain("width:90%;background:#ff7f0e");
    expect(usageBar(150, 100, "")).toContain("width:100%;background:#d62728");
    expect(usageBar(1, 3, '<"x">')).toContain('title="&#60;&#34;x&#34;&#62;"');
    expect(usageBar(80, 100, "")).toContain("background:#3b7dd8");
    expect(usageBar(100, 100, "")).toContain("width:100%;background:#ff7f0e");
    expect(usageBar(1, 0, "")).toBe("");
    expect(cssPercent(5, 0)).toBe("0%");
  });

  it("a table escapes its text cells, keeps its markup cells, and says none when empty", () => {
    expect(htmlTable(["a<", "b"], [["<x>", new Html("<b>y</b>")]])).toBe(
      '<table><thead><tr><th>a&#60;</th><th>b</th></tr></thead><tbody>\n<tr><td>&#60;x&#62;</td><td class="chart"><b>y</b></td></tr>\n</tbody></table>',
    );
    expect(htmlTable(["a", "b"], [])).toContain('<td colspan="2">none</td>');
    expect(escapeHtml(`'&"`)).toBe("&#39;&#38;&#34;");
  });

  it("long text wraps anywhere past 40 characters, and past 200 is cut, whole on hover", () => {
    expect(wrappingText("x".repeat(40))).toBe("x".repeat(40));
    expect(wrappingText("x".repeat(41))).toEqual(
      new Html(`<span style="overflow-wrap:anywhere">${"x".repeat(41)}</span>`),
    );
    expect(wrappingText("x".repeat(200))).toEqual(
      new Html(`<span style="overflow-wrap:anywhere">${"x".repeat(200)}</span>`),
    );
    expect(wrappingText("x".repeat(201))).toEqual(
      new Html(
        `<span style="overflow-wrap:anywhere" title="${"x".repeat(201)}">${"x".repeat(200)}…</span>`,
      ),
    );
  });

  it("a page's first heading may differ from its title", () => {
    const page = htmlPage("T", "", { heading: "H" });
    expect(page).toContain("<title>T</title>");
    expect(page).toContain("<h1>H</h1>");
  });
});
