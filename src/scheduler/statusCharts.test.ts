import { describe, expect, it } from "vitest";
import type { TaskStreamRecord } from "../protocol/messagesSession.ts";
import {
  packLanes,
  prefixColour,
  progressBar,
  recentTaskStreamSvg,
  streamSpan,
  taskStreamSvg,
} from "./statusCharts.ts";

function run(
  key: string,
  worker: string,
  start: number,
  stop: number,
  extra: Partial<TaskStreamRecord> = {},
): TaskStreamRecord {
  return {
    key,
    worker,
    status: "OK",
    startstops: [{ action: "compute", start, stop }],
    nbytes: 8,
    ...extra,
  };
}

/** The rects of an SVG: x, y, width, fill and title. */
function rects(svg: string): { x: number; y: number; w: number; fill: string; title: string }[] {
  return [
    ...svg.matchAll(
      /<rect x="([\d.]+)" y="(\d+)" width="([\d.]+)" height="\d+" fill="([^"]+)"><title>([^<]*)<\/title><\/rect>/g,
    ),
  ].map((m) => ({ x: +m[1], y: +m[2], w: +m[3], fill: m[4], title: m[5] }));
}

describe("the /status page's charts", () => {
  it("a progress bar has a segment per state with tasks, widths by share, done / total beside", () => {
    const bar = progressBar({ memory: 6, processing: 3, waiting: 1, erred: 0 });
    expect(bar).toContain('style="width:60%;background:#3b7dd8" title="memory: 6"');
    expect(bar).toContain('title="processing: 3"');
    expect(bar).toContain('style="width:10%;background:#c7c7c7" title="waiting: 1"');
    expect(bar).not.toContain("erred");
    expect(bar).toMatch(/<\/span> 6 \/ 10$/);
    // Nothing at all: an empty bar.
    expect(progressBar({})).toBe('<span class="bar"></span> 0 / 0');
  });

  it("packs overlapping runs of a worker on lanes, each on the first lane free", () => {
    const lanes = packLanes([
      { start: 0, stop: 2, id: "a" },
      { start: 1, stop: 3, id: "b" },
      { start: 2, stop: 4, id: "c" },
      { start: 3, stop: 5, id: "d" },
      { start: 3.5, stop: 4, id: "e" },
    ]);
    expect(lanes.map((l) => l.map((b) => b.id))).toEqual([["a", "c"], ["b", "d"], ["e"]]);
    expect(packLanes([])).toEqual([]);
  });

  it("zooms to the runs it draws: the shortest span holding them, at most the maximum", () => {
    expect(streamSpan([run("a-1", "w", 99.7, 99.9)], 100, 20)).toBe(1);
    expect(streamSpan([run("a-1", "w", 96, 97)], 100, 20)).toBe(5);
    expect(streamSpan([run("a-1", "w", 50, 99)], 100, 20)).toBe(20);
    expect(streamSpan([], 100, 20)).toBe(1);
  });

  it("draws a bar per compute and transfer, on a row of lanes per worker, along the time", () => {
    const now = 1000;
    const svg = recentTaskStreamSvg(
      [
        run("inc-1", "tcp://b:1", 999, 999.5),
        run("inc-2", "tcp://a:1", 999.5, 1000, {
          startstops: [
            { action: "transfer", start: 999.2, stop: 999.5, source: "tcp://b:1" },
            { action: "compute", start: 999.5, stop: 1000 },
          ],
        }),
        run("inc-3", "tcp://a:1", 999.6, 999.8, { status: "error" }),
        // Older than the maximum span: left out.
        run("old-1", "tcp://c:1", 900, 901),
      ],
      now,
      20,
    );
    expect(svg).toMatch(/^<svg class="stream" width="900"/);
    expect(svg).toContain('aria-label="task stream of the last 1 s"');
    expect(svg).not.toContain("old-1");
    expect(svg).not.toContain("tcp://c:1");
    const bars = rects(svg);
    expect(bars.map((b) => b.title)).toEqual([
      "transfer for inc-2: 0.3000 s",
      "inc-2 (OK): 0.5000 s",
      "inc-3 (error): 0.2000 s",
      "inc-1 (OK): 0.5000 s",
    ]);
    const [transfer, inc2, inc3, inc1] = bars;
    // Worker a (sorted first) on two lanes: inc-3 overlaps inc-2. Worker b below.
    expect([transfer.y, inc2.y, inc3.y]).toEqual([0, 0, 10]);
    expect(inc1.y).toBe(24);
    // 170 px of labels, then 730 px for the second.
    expect(inc1.x).toBeCloseTo(170, 0);
    expect(inc1.w).toBeCloseTo(365, 0);
    expect(inc2.x).toBeCloseTo(535, 0);
    expect(transfer.fill).toBe("#d62728");
    expect(inc3.fill).toBe("#000000");
    expect(inc2.fill).toBe(prefixColour("inc"));
    expect(inc1.fill).toBe(inc2.fill);
    expect(svg).toContain(">now</text>");
  });

  it("says so when nothing ran lately, and escapes keys and addresses", () => {
    expect(recentTaskStreamSvg([run("x", "w", 1, 2)], 1000, 20)).toBe(
      "<p>no task ran in the last 20 s</p>",
    );
    const svg = recentTaskStreamSvg([run("<b>-1", "tcp://<w>:1", 9.5, 9.9)], 10, 20);
    expect(svg).not.toContain("<b>");
    expect(svg).toContain("&#60;b&#62;-1 (OK)");
    expect(svg).toContain(">tcp://&#60;w&#62;:1</text>");
  });

  it("names at most the first 100 characters of a long key on hover", () => {
    const key = `${"k<".repeat(500)}-1`;
    const svg = recentTaskStreamSvg(
      [run(key, "w", 9.5, 9.9, { startstops: [{ action: "transfer", start: 9, stop: 9.4 }] })],
      10,
      20,
    );
    // 2,000 runs of 1,000-character keys made a task stream of 2.2 MB.
    const cut = `${"k&#60;".repeat(50)}…`;
    expect(rects(svg).map((b) => b.title)).toEqual([`transfer for ${cut}: 0.4000 s`]);
    expect(svg.length).toBeLessThan(1_200);
  });

  it("cuts a long worker address in the middle to fit its label, all of it on hover", () => {
    const worker = "tcp://ip-172-31-45-123.eu-west-1.compute.internal:38421";
    const svg = recentTaskStreamSvg([run("inc-1", worker, 9.5, 9.9)], 10, 20);
    // Beyond 30 characters it ran into the bars, which start at 170 px.
    expect(svg).toContain(
      `<text x="0" y="9" font-size="10"><title>${worker}</title>tcp://ip-172-3….internal:38421</text>`,
    );
  });

  it("over a window of its own: cuts intervals at its edges, merges bars under a pixel apart", () => {
    const labels = { tick: (t: number) => `+${t} s`, label: "the report's task stream" };
    // 1,000 tasks of 1 ms back to back on one thread over 1 s (730 px): 2 bars a pixel.
    const many = Array.from({ length: 1000 }, (_, i) =>
      run(`inc-${i}`, "tcp://a:1", 100 + i / 1000, 100 + (i + 1) / 1000),
    );
    const svg = taskStreamSvg(
      [...many, run("sum-1", "tcp://a:1", 100.999, 102), run("late-1", "tcp://a:1", 105, 106)],
      100,
      101.5,
      labels,
    );
    const bars = rects(svg ?? "");
    expect(bars).toHaveLength(2);
    expect(bars[0].title).toBe("1000 × inc: 1.0000 s in all");
    expect(bars[0].x).toBeCloseTo(170, 0);
    expect(bars[0].w).toBeCloseTo(486.7, 0);
    // sum-1 overlaps the last inc by a millisecond: the next lane; cut at the window's end.
    expect(bars[1]).toMatchObject({ y: 10, title: "sum-1 (OK): 1.0010 s" });
    expect(bars[1].x + bars[1].w).toBeCloseTo(900, 0);
    expect(svg).toContain('aria-label="the report&#39;s task stream"');
    expect(svg).toContain(">+0 s</text>");
    expect(svg).toContain(">+1.5 s</text>");
    // Merged by kind only: an erred run between two of a prefix stays apart.
    const mixed = taskStreamSvg(
      [
        run("inc-1", "w", 0, 0.001),
        run("inc-2", "w", 0.001, 0.002, { status: "error" }),
        run("inc-3", "w", 0.002, 0.003),
      ],
      0,
      10,
      labels,
    );
    expect(rects(mixed ?? "").map((b) => b.title)).toEqual([
      "inc-1 (OK): 0.0010 s",
      "inc-2 (error): 0.0010 s",
      "inc-3 (OK): 0.0010 s",
    ]);
    expect(taskStreamSvg([run("x-1", "w", 0, 1)], 5, 6, labels)).toBeNull();
    expect(taskStreamSvg([run("x-1", "w", 0, 1)], 1, 1, labels)).toBeNull();
  });

  it("gives each prefix a colour of its own, the same every time", () => {
    expect(prefixColour("inc")).toBe(prefixColour("inc"));
    expect(prefixColour("inc")).not.toBe(prefixColour("add"));
    expect(prefixColour("inc")).toMatch(/^hsl\(\d+,60%,55%\)$/);
  });
});
