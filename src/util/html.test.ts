import { describe, expect, it } from "vitest";
import { escapeHtml, Html, htmlTable, usageBar } from "./html.ts";

describe("the pages' HTML", () => {
  it("a usage bar fills with what is used of the limit, orange beyond 80%, red beyond it", () => {
    expect(usageBar(10, null, "x")).toBe("");
    expect(usageBar(25, 100, "25 of 100")).toContain("width:25%;background:#3b7dd8");
    expect(usageBar(90, 100, "")).toContain("width:90%;background:#ff7f0e");
    expect(usageBar(150, 100, "")).toContain("width:100%;background:#d62728");
    expect(usageBar(1, 3, '<"x">')).toContain('title="&#60;&#34;x&#34;&#62;"');
  });

  it("a table escapes its text cells, keeps its markup cells, and says none when empty", () => {
    expect(htmlTable(["a<", "b"], [["<x>", new Html("<b>y</b>")]])).toBe(
      '<table><thead><tr><th>a&#60;</th><th>b</th></tr></thead><tbody>\n<tr><td>&#60;x&#62;</td><td class="chart"><b>y</b></td></tr>\n</tbody></table>',
    );
    expect(htmlTable(["a", "b"], [])).toContain('<td colspan="2">none</td>');
    expect(escapeHtml(`'&"`)).toBe("&#39;&#38;&#34;");
  });
});
