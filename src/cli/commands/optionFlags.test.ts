import { describe, expect, it } from "vitest";
import { withOptionFlags } from "./optionFlags.ts";

describe("withOptionFlags", () => {
  it("names a refused option and the options its refusal names by their flags", () => {
    expect(
      withOptionFlags("Worker option memoryTarget (0.99) must be below memoryPause (0.8)"),
    ).toBe("--memory-target (0.99) must be below --memory-pause (0.8)");
    expect(
      withOptionFlags(
        'memoryLimit 62.50 kiB is too small for this worker (memoryMeasure "managed")',
      ),
    ).toBe("--memory-limit 62.50 kiB is too small for this worker (--memory-measure managed)");
    expect(withOptionFlags("Scheduler option taskModules: no such file: /x.ts")).toBe(
      "--tasks: no such file: /x.ts",
    );
  });

  it("leaves the user's own text in a refusal as it is: a path, a name, a module's words", () => {
    expect(
      withOptionFlags('Worker option spillDirectory: no such directory: "/data/memoryLimit/spill"'),
    ).toBe('--spill-directory: no such directory: "/data/memoryLimit/spill"');
    expect(
      withOptionFlags("spillDirectory /data/spillDirectory cannot be written in (EACCES)"),
    ).toBe("--spill-directory /data/spillDirectory cannot be written in (EACCES)");
    expect(
      withOptionFlags('Worker option taskModules: cannot import /t.ts: httpAddress "x" is not set'),
    ).toBe('--tasks: cannot import /t.ts: httpAddress "x" is not set');
  });

  it("leaves a message that refuses no option as it is", () => {
    expect(withOptionFlags("worker thread pool failed to start: contactAddress missing")).toBe(
      "worker thread pool failed to start: contactAddress missing",
    );
  });
});
