import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { readSchedulerFile, removeSchedulerFile, writeSchedulerFile } from "./schedulerFile.ts";

const SCHEDULER_FILE = fileURLToPath(new URL("./schedulerFile.ts", import.meta.url));
const PARTIAL_FILES = fileURLToPath(new URL("./partialFiles.ts", import.meta.url));

/**
 * In a child process removing partial files on signals, as `weft`'s does: write the
 * scheduler file `path`, and once SIGINT is listened for as it writes (its partial file
 * being partialFiles.ts's), deliver SIGINT there. What the child said, and the signal
 * that ended it.
 */
function writeSignalled(path: string): { said: string; signal: NodeJS.Signals | null } {
  const script =
    `const { writeSchedulerFile } = await import(${JSON.stringify(SCHEDULER_FILE)});\n` +
    `const { removePartialFilesOnSignals } = await import(${JSON.stringify(PARTIAL_FILES)});\n` +
    "removePartialFilesOnSignals();\n" +
    "let done = false;\n" +
    `const content = { type: "Scheduler", id: "S", address: "tcp://h:1", services: {}, started: 0, workers: {} };\n` +
    `writeSchedulerFile(${JSON.stringify(path)}, content).then(() => { done = true; });\n` +
    "const look = () => {\n" +
    // Its handler, as a signal calls it: the checks between I/O steps see the write under way.
    '  if (process.listenerCount("SIGINT") > 0) process.emit("SIGINT", "SIGINT");\n' +
    '  else if (done) process.stdout.write("written, SIGINT never listened for");\n' +
    "  else setImmediate(look);\n" +
    "};\n" +
    "look();\n";
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module"], {
    input: script,
    encoding: "utf8",
    timeout: 30_000,
  });
  return { said: r.stdout, signal: r.signal };
}

const dir = mkdtempSync(join(tmpdir(), "weft-scheduler-file-unit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const content = (id: string, address: string) =>
  ({ type: "Scheduler", id, address, services: {}, started: 0, workers: {} }) as const;

describe("scheduler files", () => {
  it("are replaced whole, and removed only by the scheduler they name", async () => {
    const file = join(dir, "s.json");
    await writeSchedulerFile(file, content("Scheduler-a", "tcp://10.0.0.1:8786"));
    expect(await readSchedulerFile(file)).toBe("tcp://10.0.0.1:8786");
    // A second scheduler writes its own over it: the first, closing, leaves it.
    await writeSchedulerFile(file, content("Scheduler-b", "tcp://10.0.0.2:8786"));
    await removeSchedulerFile(file, "Scheduler-a");
    expect(await readSchedulerFile(file)).toBe("tcp://10.0.0.2:8786");
    await removeSchedulerFile(file, "Scheduler-b");
    expect(existsSync(file)).toBe(false);
    await removeSchedulerFile(file, "Scheduler-b"); // gone already: nothing to do
  });

  it("a closing scheduler never removes a file another renamed over its own as it looked", async () => {
    // Read as its own, then removed by its path: the second scheduler's file, renamed
    // over the path between the two steps, was removed, and its workers found none.
    const sub = join(dir, "raced");
    mkdirSync(sub);
    const file = join(sub, "s.json");
    await writeSchedulerFile(file, content("Scheduler-a", "tcp://10.0.0.1:8786"));
    await removeSchedulerFile(file, "Scheduler-a", () =>
      writeSchedulerFile(file, content("Scheduler-b", "tcp://10.0.0.2:8786")),
    );
    expect(await readSchedulerFile(file, { timeoutMs: 0 })).toBe("tcp://10.0.0.2:8786");
    expect(readdirSync(sub)).toEqual(["s.json"]); // no hidden file left
    // Its own, still there once looked at again, is removed.
    await writeSchedulerFile(file, content("Scheduler-c", "tcp://10.0.0.3:8786"));
    await removeSchedulerFile(file, "Scheduler-c", async () => {});
    expect(readdirSync(sub)).toEqual([]);
  });

  it("a reader waits for the file, and refuses a bad path", async () => {
    const file = join(dir, "later.json");
    const reading = readSchedulerFile(file, { timeoutMs: 5_000, pollMs: 10 });
    await new Promise((r) => setTimeout(r, 50));
    await writeSchedulerFile(file, content("Scheduler-c", "tls://h:1"));
    expect(await reading).toBe("tls://h:1");
    await expect(readSchedulerFile("")).rejects.toThrow(
      "readSchedulerFile: the path must be a non-empty string",
    );
    await expect(readSchedulerFile(dir)).rejects.toThrow(/cannot read the scheduler file .*EISDIR/);
    // A link to /dev/zero was read forever, a FIFO until a writer came: refused unread.
    const zero = join(dir, "zero.json");
    symlinkSync("/dev/zero", zero);
    await expect(readSchedulerFile(zero)).rejects.toThrow(
      new Error(
        `cannot read the scheduler file ${zero}: it is a character device, not a regular file`,
      ),
    );
    const fifo = join(dir, "fifo.json");
    execFileSync("mkfifo", [fifo]);
    await expect(readSchedulerFile(fifo)).rejects.toThrow(
      new Error(
        `cannot read the scheduler file ${fifo}: it is a FIFO (named pipe), not a regular file`,
      ),
    );
    await removeSchedulerFile(fifo, "Scheduler-c"); // not read, not removed
    expect(existsSync(fifo)).toBe(true);
    await expect(readSchedulerFile(file, { timeoutMs: -1 })).rejects.toThrow(
      "readSchedulerFile: timeoutMs must be a number of ms >= 0 (or Infinity), got -1",
    );
    await expect(readSchedulerFile(file, { pollMs: 0 })).rejects.toThrow(
      "readSchedulerFile: pollMs must be a finite number of ms > 0, got 0",
    );
  });

  it("waits without end with timeoutMs Infinity, until its signal aborts, rejecting with the reason", async () => {
    const file = join(dir, "never.json");
    const stop = new AbortController();
    let waiting = 0;
    const reading = readSchedulerFile(file, {
      timeoutMs: Number.POSITIVE_INFINITY,
      pollMs: 10_000, // the abort ends the sleep between looks, not the next look
      signal: stop.signal,
      onWaiting: () => waiting++,
    }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    const reason = new Error("the worker was told to stop");
    stop.abort(reason);
    expect(await reading).toBe(reason);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(waiting).toBe(1);
    // Aborted already: not even a first look.
    await writeSchedulerFile(file, content("Scheduler-d", "tcp://h:2"));
    const err = await readSchedulerFile(file, { signal: AbortSignal.abort() }).catch((e) => e);
    expect((err as Error).name).toBe("AbortError");
    // Infinity finds a file that comes.
    const later = join(dir, "infinite.json");
    const found = readSchedulerFile(later, { timeoutMs: Number.POSITIVE_INFINITY, pollMs: 10 });
    await new Promise((r) => setTimeout(r, 50));
    await writeSchedulerFile(later, content("Scheduler-e", "tcp://h:3"));
    expect(await found).toBe("tcp://h:3");
  });

  it("an onWaiting that throws or rejects rejects the call with its error", async () => {
    const missing = join(dir, "waited.json");
    await expect(
      readSchedulerFile(missing, {
        pollMs: 10,
        onWaiting: () => {
          throw new RangeError("cannot say it waits");
        },
      }),
    ).rejects.toThrow("cannot say it waits");
    // Before, the rejection was unhandled (the process ended), and the call waited on.
    await expect(
      readSchedulerFile(missing, {
        pollMs: 10,
        onWaiting: () => Promise.reject(new RangeError("cannot say it waits later")),
      }),
    ).rejects.toThrow("cannot say it waits later");
  }, 5_000);

  it("refuses a file without a non-empty address, or not JSON, saying which", async () => {
    const file = join(dir, "bad.json");
    for (const [text, why] of [
      ['{"address":""}', 'gives no address (a string field "address")'],
      ["null", 'gives no address (a string field "address")'],
      ["{oops", "is not JSON: "],
    ]) {
      writeFileSync(file, text);
      await expect(readSchedulerFile(file)).rejects.toThrow(`the scheduler file ${file} ${why}`);
    }
    // Nor does a closing scheduler remove a file it cannot read as its own.
    await removeSchedulerFile(file, "Scheduler-a");
    expect(existsSync(file)).toBe(true);
  });

  it("with timeoutMs 0 looks once and does not wait; pollMs must be finite", async () => {
    let waiting = 0;
    const missing = join(dir, "missing.json");
    await expect(
      readSchedulerFile(missing, { timeoutMs: 0, onWaiting: () => waiting++ }),
    ).rejects.toThrow(`no scheduler file at ${missing} after 0 ms`);
    expect(waiting).toBe(0);
    await expect(readSchedulerFile(missing, { pollMs: Number.POSITIVE_INFINITY })).rejects.toThrow(
      "pollMs must be a finite number of ms > 0, got Infinity",
    );
  });

  it("says it waits once, however many looks it takes", async () => {
    const file = join(dir, "slow.json");
    let waiting = 0;
    const reading = readSchedulerFile(file, { pollMs: 5, onWaiting: () => waiting++ });
    await new Promise((r) => setTimeout(r, 100));
    await writeSchedulerFile(file, content("Scheduler-f", "tcp://h:4"));
    expect(await reading).toBe("tcp://h:4");
    expect(waiting).toBe(1);
  });

  it("is written as writeWholeFile writes: its partial file removed should a signal end weft", () => {
    // Its own partial file and rename were not partialFiles.ts's: a Ctrl-C that ended the
    // process as it wrote left the hidden `.<uuid>.weft-scheduler-file` for good.
    const sub = join(dir, "signalled");
    mkdirSync(sub);
    const { said, signal } = writeSignalled(join(sub, "s.json"));
    expect(said).toBe("");
    expect(signal).toBe("SIGINT");
    expect(readdirSync(sub)).toEqual([]);
  }, 60_000);

  it("is never written in place, not even where writeWholeFile writes a file so", async () => {
    // A file of two names: writeWholeFile writes it in place (both names see it), where a
    // worker polling this one could read half of it. Renamed over, the other keeps the old.
    const sub = join(dir, "linked");
    mkdirSync(sub);
    const file = join(sub, "s.json");
    writeFileSync(file, "the old scheduler's");
    linkSync(file, join(sub, "other-name.json"));
    await writeSchedulerFile(file, content("Scheduler-k", "tcp://h:9"));
    expect(await readSchedulerFile(file)).toBe("tcp://h:9");
    expect(readFileSync(join(sub, "other-name.json"), "utf8")).toBe("the old scheduler's");
    // A FIFO (or a device: /dev/null, which root's rename would have replaced) is no
    // scheduler file a reader takes: refused, and left there.
    const fifo = join(sub, "fifo.json");
    execFileSync("mkfifo", [fifo]);
    await expect(writeSchedulerFile(fifo, content("Scheduler-m", "tcp://h:11"))).rejects.toThrow(
      new Error(
        `cannot write the scheduler file ${fifo}: it is a FIFO (named pipe), not a regular file`,
      ),
    );
    expect(statSync(fifo).isFIFO()).toBe(true);
  });

  it("follows a symlink, as Dask's open(path, 'w') does: the file it names is written and removed, the link kept", async () => {
    // The link was replaced by a regular file, and that file removed at exit: the
    // user's link gone, and with it where they meant the file to be.
    const sub = join(dir, "symlinked");
    mkdirSync(join(sub, "real"), { recursive: true });
    const target = join(sub, "real", "s.json");
    writeFileSync(target, "the old scheduler's");
    const linked = join(sub, "link.json");
    symlinkSync(join("real", "s.json"), linked);
    await writeSchedulerFile(linked, content("Scheduler-l", "tcp://h:10"));
    expect(lstatSync(linked).isSymbolicLink()).toBe(true);
    expect(await readSchedulerFile(target)).toBe("tcp://h:10");
    expect(readdirSync(join(sub, "real"))).toEqual(["s.json"]); // renamed beside the target
    await removeSchedulerFile(linked, "Scheduler-l");
    expect(lstatSync(linked).isSymbolicLink()).toBe(true);
    expect(existsSync(target)).toBe(false);
    // Now a link to nothing: the file it names is made there, and removed again.
    await writeSchedulerFile(linked, content("Scheduler-n", "tcp://h:11"));
    expect(await readSchedulerFile(target)).toBe("tcp://h:11");
    await removeSchedulerFile(linked, "Scheduler-n");
    expect(readdirSync(join(sub, "real"))).toEqual([]);
    expect(readdirSync(sub).sort()).toEqual(["link.json", "real"]);
    // A link to a directory is refused as the directory is, and left a link.
    const toDir = join(sub, "dir.json");
    symlinkSync("real", toDir);
    await expect(writeSchedulerFile(toDir, content("Scheduler-d", "tcp://h:12"))).rejects.toThrow(
      new Error(`cannot write the scheduler file ${toDir}: it is a directory`),
    );
    expect(lstatSync(toDir).isSymbolicLink()).toBe(true);
    // A link to a file in a directory not there: that directory is named (as the link
    // leads to it, from the directory the link is really in).
    const lost = join(sub, "lost.json");
    symlinkSync(join("gone", "s.json"), lost);
    await expect(writeSchedulerFile(lost, content("Scheduler-g", "tcp://h:13"))).rejects.toThrow(
      new Error(
        `cannot write the scheduler file ${lost}: no such directory: ${join(realpathSync(sub), "gone")}`,
      ),
    );
  });

  // A tmpfs for files, often the scheduler file's place on a cluster's nodes.
  it.runIf(existsSync("/dev/shm"))(
    "follows a symlink under /dev/shm as anywhere, keeping the link",
    async () => {
      const shm = mkdtempSync("/dev/shm/weft-scheduler-file-");
      try {
        const linked = join(shm, "link.json");
        symlinkSync("s.json", linked);
        await writeSchedulerFile(linked, content("Scheduler-s", "tcp://h:17"));
        // The link was replaced by the file, and the file removed at exit: no link left.
        expect(lstatSync(linked).isSymbolicLink()).toBe(true);
        expect(await readSchedulerFile(join(shm, "s.json"))).toBe("tcp://h:17");
        await removeSchedulerFile(linked, "Scheduler-s");
        expect(readdirSync(shm)).toEqual(["link.json"]);
      } finally {
        rmSync(shm, { recursive: true, force: true });
      }
    },
  );

  it("says a symlink loop is one", async () => {
    const loop = join(dir, "loop-a.json");
    symlinkSync("loop-b.json", loop);
    symlinkSync("loop-a.json", join(dir, "loop-b.json"));
    // It was "cannot write it (ELOOP)", or "cannot write in DIR (ELOOP)".
    await expect(writeSchedulerFile(loop, content("Scheduler-o", "tcp://h:16"))).rejects.toThrow(
      new Error(
        `cannot write the scheduler file ${loop}: too many levels of symbolic links: they loop, or chain past 40 (ELOOP)`,
      ),
    );
  });

  it("a start removes the hidden file a scheduler killed as it removed its file left there, and no other", async () => {
    const sub = join(dir, "leftovers");
    mkdirSync(sub);
    const file = join(sub, "s.json");
    const uuid = "0b5e7a52-4f5c-4a8e-9d3e-1c2b3a4d5e6f";
    // kill -9 between removeSchedulerFile's rename and its rm left this one for good.
    const leftover = join(sub, `.s.json.${uuid}.removed`);
    const others = [
      `.t.json.${uuid}.removed`, // another scheduler file's
      `.s.json.${uuid}.partial`, // a write's, partialFiles.ts's
      `.s.json.not-a-uuid.removed`,
      "s.json.removed",
    ];
    for (const name of [leftover, ...others.map((o) => join(sub, o))]) {
      writeFileSync(name, JSON.stringify(content("Scheduler-dead", "tcp://h:1")));
    }
    await new Promise((r) => setTimeout(r, 20)); // an earlier change time than the file's
    await writeSchedulerFile(file, content("Scheduler-q", "tcp://h:14"));
    expect(readdirSync(sub).sort()).toEqual([...others, "s.json"].sort());
    // Through a symlink, those beside the file it names.
    const linkSub = join(dir, "leftovers-linked");
    mkdirSync(linkSub);
    writeFileSync(leftover, "{}");
    await new Promise((r) => setTimeout(r, 20));
    symlinkSync(file, join(linkSub, "link.json"));
    await writeSchedulerFile(join(linkSub, "link.json"), content("Scheduler-r", "tcp://h:15"));
    expect(existsSync(leftover)).toBe(false);
    // A name of 40 characters, as long as the hidden name keeps: a longer one starting
    // with it, held aside by its closing scheduler to be put back, has the same hidden
    // name, and was removed, another scheduler's file lost.
    const forty = `${"c".repeat(35)}.json`;
    const longer = `${forty}.bak`;
    const heldAside = join(sub, `.${longer.slice(0, 40)}.${uuid}.removed`);
    writeFileSync(heldAside, JSON.stringify(content("Scheduler-live", "tcp://h:2")));
    await new Promise((r) => setTimeout(r, 20));
    await writeSchedulerFile(join(sub, forty), content("Scheduler-t", "tcp://h:18"));
    expect(existsSync(heldAside)).toBe(true);
  });

  it("a failed write leaves no partial file behind", async () => {
    const sub = join(dir, "failing");
    const occupied = join(sub, "s.json");
    mkdirSync(join(occupied, "inside"), { recursive: true }); // a directory where the file goes
    await expect(writeSchedulerFile(occupied, content("Scheduler-g", "tcp://h:5"))).rejects.toThrow(
      `cannot write the scheduler file ${occupied}: it is a directory`,
    );
    expect(readdirSync(sub)).toEqual(["s.json"]);
    // A directory that is not there is named, not the partial file's hidden name.
    const nowhere = join(dir, "no-such-dir", "s.json");
    await expect(writeSchedulerFile(nowhere, content("Scheduler-h", "tcp://h:6"))).rejects.toThrow(
      new Error(
        `cannot write the scheduler file ${nowhere}: no such directory: ${join(dir, "no-such-dir")}`,
      ),
    );
  });

  it.runIf(process.platform === "linux")(
    "a directory that takes no file though it looks writable is named, not the partial file",
    async () => {
      // /proc: it was "ENOENT: no such file or directory, open '/proc/.0fd2….weft-scheduler-file'".
      await expect(
        writeSchedulerFile("/proc/weft-s.json", content("Scheduler-i", "tcp://h:7")),
      ).rejects.toThrow(
        /^cannot write the scheduler file \/proc\/weft-s\.json: cannot write in \/proc \(\w+\)$/,
      );
      await expect(
        writeSchedulerFile("/proc/weft-s.json", content("Scheduler-i", "tcp://h:7")),
      ).rejects.not.toThrow(/\.partial/);
      // Through a symlink, the directory it leads to is said: it was the link's own,
      // which takes files.
      const linked = join(dir, "to-proc.json");
      symlinkSync("/proc/weft-s.json", linked);
      await expect(writeSchedulerFile(linked, content("Scheduler-i", "tcp://h:7"))).rejects.toThrow(
        new RegExp(`^cannot write the scheduler file ${linked}: cannot write in /proc \\(\\w+\\)$`),
      );
    },
  );

  // Only where this process may bind-mount (root on Linux): a file a container is given.
  it.runIf(process.platform === "linux" && process.getuid?.() === 0)(
    "a mount point is said to be one, not the directory it is in",
    async ({ skip }) => {
      const source = join(dir, "mount-source.json");
      const file = join(dir, "mounted.json");
      writeFileSync(source, "{}\n");
      writeFileSync(file, "{}\n");
      if (spawnSync("mount", ["--bind", source, file]).status !== 0) skip("no bind mount here");
      try {
        // It was "cannot write in <its directory> (EBUSY)", of a directory that takes files.
        await expect(writeSchedulerFile(file, content("Scheduler-m", "tcp://h:7"))).rejects.toThrow(
          `cannot write the scheduler file ${file}: it is a mount point (a file bind-mounted into a container?), which the file written beside it cannot replace (EBUSY): give a path in a directory mounted whole`,
        );
        expect(readFileSync(file, "utf8")).toBe("{}\n");
      } finally {
        spawnSync("umount", [file]);
      }
    },
  );
});

describe("readSchedulerFile's options", () => {
  it("refuses options that are not an object, or name no option, rather than wait the default 30 s", async () => {
    const missing = join(tmpdir(), `weft-no-such-scheduler-file-${process.pid}.json`);
    await expect(readSchedulerFile(missing, null as never)).rejects.toThrow(
      "readSchedulerFile: options must be an object, got null",
    );
    await expect(readSchedulerFile(missing, { timeout: 10 } as never)).rejects.toThrow(
      'readSchedulerFile: unknown option "timeout" (did you mean timeoutMs?)',
    );
    await expect(readSchedulerFile(missing, { timeoutMs: 10 })).rejects.toThrow(missing);
  });

  it("refuses a signal or an onWaiting of the wrong type, and shows a BigInt as one, naming the option", async () => {
    // They failed as "signal?.throwIfAborted is not a function" and, once the file
    // was found missing, "options.onWaiting is not a function"; a BigInt showed as "5".
    const missing = join(tmpdir(), `weft-no-such-scheduler-file-${process.pid}.json`);
    for (const [options, message] of [
      [{ signal: {} }, "readSchedulerFile: signal must be an AbortSignal, got {}"],
      [{ onWaiting: 5, timeoutMs: 10 }, "readSchedulerFile: onWaiting must be a function, got 5"],
      [
        { timeoutMs: 5n },
        'readSchedulerFile: timeoutMs must be a number of ms >= 0 (or Infinity), got "5n"',
      ],
    ] as const) {
      await expect(readSchedulerFile(missing, options as never)).rejects.toThrow(message);
    }
    await expect(readSchedulerFile(5n as never)).rejects.toThrow(
      'readSchedulerFile: the path must be a non-empty string, got "5n"',
    );
  });
});
