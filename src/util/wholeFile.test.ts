import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { replaceWholeFile, writeWholeFile } from "./wholeFile.ts";

/** The code a rename fails with while set (a mount point's EBUSY, a sticky directory's EPERM). */
const renameFailure = vi.hoisted(() => ({ code: null as string | null }));
vi.mock("node:fs/promises", async (original) => {
  const fs = await original<typeof import("node:fs/promises")>();
  return {
    ...fs,
    rename: (from: string, to: string) => {
      const code = renameFailure.code;
      if (code === null) return fs.rename(from, to);
      return Promise.reject(
        Object.assign(new Error(`${code}: refused, rename '${from}' -> '${to}'`), {
          code,
          syscall: "rename",
        }),
      );
    },
  };
});

const WHOLE_FILE = fileURLToPath(new URL("./wholeFile.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "weft-whole-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `writeWholeFile(path, 1 MB)` in a process whose files may grow to 64 KiB
 * (`ulimit -f`: a disk filling up, without one): its error code.
 */
function writeMegabyteCappedAt64KiB(path: string): string {
  const script =
    `const { writeWholeFile } = await import(${JSON.stringify(WHOLE_FILE)});\n` +
    `await writeWholeFile(${JSON.stringify(path)}, "x".repeat(1 << 20)).then(\n` +
    `  () => process.stdout.write("written"),\n` +
    `  (err) => process.stdout.write(err.code + " " + err.message),\n` +
    ");\n";
  const r = spawnSync(
    "sh",
    ["-c", 'ulimit -f 128 && exec "$0" "$@"', process.execPath, "--import", "tsx"],
    { input: script, encoding: "utf8", timeout: 30_000 },
  );
  return r.stdout;
}

describe("writeWholeFile", () => {
  it("leaves the file as it was when the write fails midway, and no part of it", () => {
    // writeFile truncated it first: the old file was lost, and 64 KiB of the new left.
    const sub = join(dir, "capped");
    mkdirSync(sub);
    const path = join(sub, "run.cpuprofile");
    writeFileSync(path, "the profile of yesterday");
    expect(writeMegabyteCappedAt64KiB(path)).toMatch(/^EFBIG .*file too large/);
    expect(readFileSync(path, "utf8")).toBe("the profile of yesterday");
    expect(readdirSync(sub)).toEqual(["run.cpuprofile"]);
    // A file not there before is not there after.
    const fresh = join(sub, "fresh.json");
    expect(writeMegabyteCappedAt64KiB(fresh)).toMatch(/^EFBIG /);
    expect(readdirSync(sub)).toEqual(["run.cpuprofile"]);
  }, 60_000);

  it("replaces a file, keeping its permissions, and the file a symlink names, keeping the link", async () => {
    const sub = join(dir, "replaced");
    mkdirSync(sub);
    const path = join(sub, "kept.json");
    writeFileSync(path, "old");
    chmodSync(path, 0o600);
    await writeWholeFile(path, "new");
    expect(readFileSync(path, "utf8")).toBe("new");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const link = join(sub, "link.json");
    symlinkSync(path, link);
    await writeWholeFile(link, "through the link");
    expect(readFileSync(path, "utf8")).toBe("through the link");
    expect(readdirSync(sub).sort()).toEqual(["kept.json", "link.json"]);
  });

  it("writes /dev/stdout in place, also when it leads to a file, which is not replaced", () => {
    // Replaced, the file a shell redirected the output to would lose what came after.
    const out = join(dir, "stdout.txt");
    const fd = openSync(out, "w");
    const inode = statSync(out).ino;
    const script =
      `const { writeWholeFile } = await import(${JSON.stringify(WHOLE_FILE)});\n` +
      `await writeWholeFile("/dev/stdout", "profile\\n");\n` +
      `process.stdout.write("after\\n");\n`;
    try {
      spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        stdio: ["ignore", fd, "inherit"],
        timeout: 30_000,
      });
    } finally {
      closeSync(fd);
    }
    // The same file, what came after in it (over the profile: writeFile opens the file
    // afresh, at its start, as it always has).
    expect(statSync(out).ino).toBe(inode);
    expect(readFileSync(out, "utf8")).toMatch(/^after\n/);
  }, 60_000);

  it("names the path given in its errors, not the file written beside it", async () => {
    const missing = join(dir, "no-such-dir", "out.json");
    await expect(writeWholeFile(missing, "x")).rejects.toThrow(
      `ENOENT: no such file or directory, open '${missing}'`,
    );
  });

  it("writes a name near the longest a file system allows, the hidden file's name cut short", async () => {
    // The hidden file's name, 46 bytes longer, was refused: ENAMETOOLONG, naming it.
    const sub = join(dir, "long");
    mkdirSync(sub);
    const path = join(sub, `${"p".repeat(240)}.json`);
    await writeWholeFile(path, "written");
    expect(readFileSync(path, "utf8")).toBe("written");
    expect(readdirSync(sub)).toEqual([`${"p".repeat(240)}.json`]);
  });

  it("removes the partial files beside it that a process killed mid-write left a minute or more before, and no other", async () => {
    for (const [name, write] of [
      ["whole", writeWholeFile],
      ["replace", replaceWholeFile],
    ] as const) {
      const sub = join(dir, `killed-${name}`);
      mkdirSync(sub);
      const uuid = "0b5e7a52-4f5c-4a8e-9d3e-1c2b3a4d5e6f";
      const uuid2 = "1c6f8b63-5a6d-4b9f-8e4f-2d3c4b5e6f70";
      const forty = `${"d".repeat(35)}.json`;
      /** Each hidden file, and whether the write removes it. */
      const hidden: [string, boolean][] = [
        [`.dump.json.${uuid}.partial`, true], // kill -9 mid-write, 2 minutes ago
        [`.dump.json.${uuid2}.partial`, false], // 10 s ago: it may be a live writer's
        [`.other.json.${uuid}.partial`, false], // another file's
        [`.dump.json.${uuid}.removed`, false], // the scheduler file's removal's
        [`.dump.json.not-a-uuid.partial`, false],
        // A name as long as the hidden name keeps: it could be a longer name's.
        [`.${forty}.${uuid}.partial`, false],
      ];
      const now = Date.now() / 1000;
      for (const [h] of hidden) {
        writeFileSync(join(sub, h), "part");
        utimesSync(join(sub, h), now - 120, now - 120);
      }
      utimesSync(join(sub, hidden[1][0]), now - 10, now - 10);
      await write(join(sub, "dump.json"), "written");
      await write(join(sub, forty), "written");
      expect(readdirSync(sub).sort()).toEqual(
        [...hidden.filter(([, removed]) => !removed).map(([h]) => h), "dump.json", forty].sort(),
      );
      expect(readFileSync(join(sub, "dump.json"), "utf8")).toBe("written");
    }
  });

  it("writes a file of several hard links in place, so that every name keeps seeing it", async () => {
    const sub = join(dir, "linked");
    mkdirSync(sub);
    const path = join(sub, "profile.json");
    writeFileSync(path, "old");
    linkSync(path, join(sub, "latest.json"));
    await writeWholeFile(path, "new");
    expect(readFileSync(join(sub, "latest.json"), "utf8")).toBe("new");
    expect(statSync(path).nlink).toBe(2);
  });

  it.skipIf(process.getuid?.() !== 0)(
    "keeps the owner of the file it replaces (root writing a user's file)",
    async () => {
      const sub = join(dir, "owned");
      mkdirSync(sub);
      const path = join(sub, "theirs.json");
      writeFileSync(path, "old");
      chownSync(path, 65534, 65534);
      // Set-user-ID too, which a chown after the chmod would have cleared.
      chmodSync(path, 0o4600);
      await writeWholeFile(path, "new");
      expect(readFileSync(path, "utf8")).toBe("new");
      const s = statSync(path);
      expect([s.uid, s.gid, s.mode & 0o7777]).toEqual([65534, 65534, 0o4600]);
    },
  );

  it.each(["EBUSY", "EPERM"])(
    "writes in place a file that cannot be renamed over (%s: a mount point, another user's in /tmp)",
    async (code) => {
      // A file bind-mounted into a container, or another user's in a sticky directory:
      // writeFile wrote it, and the rename failed after the work.
      const sub = join(dir, `unrenamable-${code}`);
      mkdirSync(sub);
      const path = join(sub, "out.json");
      writeFileSync(path, "old");
      renameFailure.code = code;
      try {
        await writeWholeFile(path, "new");
      } finally {
        renameFailure.code = null;
      }
      expect(readFileSync(path, "utf8")).toBe("new");
      expect(readdirSync(sub)).toEqual(["out.json"]);
    },
  );
});

describe("replaceWholeFile", () => {
  it.each(["EBUSY", "EPERM"])(
    "rejects, naming the path, where writeWholeFile would write in place (%s), leaving the file as it was",
    async (code) => {
      const sub = join(dir, `never-in-place-${code}`);
      mkdirSync(sub);
      const path = join(sub, "s.json");
      writeFileSync(path, "old");
      renameFailure.code = code;
      try {
        await expect(replaceWholeFile(path, "new")).rejects.toMatchObject({ code });
        await expect(replaceWholeFile(path, "new")).rejects.not.toThrow(/\.partial/);
      } finally {
        renameFailure.code = null;
      }
      expect(readFileSync(path, "utf8")).toBe("old");
      expect(readdirSync(sub)).toEqual(["s.json"]);
    },
  );

  it("renames over a file of several names, and over a link to nothing, which writeWholeFile writes through", async () => {
    const sub = join(dir, "never-in-place-links");
    mkdirSync(sub);
    const path = join(sub, "s.json");
    writeFileSync(path, "old");
    linkSync(path, join(sub, "other.json"));
    await replaceWholeFile(path, "new");
    expect(readFileSync(path, "utf8")).toBe("new");
    expect(readFileSync(join(sub, "other.json"), "utf8")).toBe("old");
    const dangling = join(sub, "dangling.json");
    symlinkSync(join(sub, "nowhere.json"), dangling);
    await replaceWholeFile(dangling, "made");
    expect(readFileSync(dangling, "utf8")).toBe("made");
    expect(readdirSync(sub).sort()).toEqual([
      "dangling.json",
      "nowhere.json",
      "other.json",
      "s.json",
    ]);
  });

  it("follows a symlink, a chain of them too, replacing the file it names beside it and keeping the link", async () => {
    const sub = join(dir, "never-in-place-symlinks");
    mkdirSync(join(sub, "real"), { recursive: true });
    const target = join(sub, "real", "s.json");
    writeFileSync(target, "old");
    chmodSync(target, 0o640);
    symlinkSync(join("real", "s.json"), join(sub, "first.json"));
    symlinkSync("first.json", join(sub, "second.json"));
    await replaceWholeFile(join(sub, "second.json"), "new");
    expect(readFileSync(target, "utf8")).toBe("new");
    expect(statSync(target).mode & 0o777).toBe(0o640);
    expect(lstatSync(join(sub, "first.json")).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(sub, "second.json")).isSymbolicLink()).toBe(true);
    expect(readdirSync(join(sub, "real"))).toEqual(["s.json"]);
    // A link reached through a symlinked directory, naming ../: up from the directory it
    // is really in, as the system reads it, not from the symlinked directory's name.
    mkdirSync(join(sub, "deep", "in"), { recursive: true });
    writeFileSync(join(sub, "deep", "s.json"), "deep old");
    symlinkSync(join("..", "s.json"), join(sub, "deep", "in", "up.json"));
    symlinkSync(join("deep", "in"), join(sub, "shortcut"));
    await replaceWholeFile(join(sub, "shortcut", "up.json"), "deep new");
    expect(readFileSync(join(sub, "deep", "s.json"), "utf8")).toBe("deep new");
    expect(readdirSync(sub).sort()).toEqual([
      "deep",
      "first.json",
      "real",
      "second.json",
      "shortcut",
    ]);
    // A chain of 40 links is followed, as open(2) follows it (Linux's MAXSYMLINKS),
    // and one of 41 refused as it refuses it.
    const chain = join(sub, "chain");
    mkdirSync(chain);
    writeFileSync(join(chain, "40"), "old");
    for (let i = 0; i < 40; i++) symlinkSync(String(i + 1), join(chain, String(i)));
    expect(readFileSync(join(chain, "0"), "utf8")).toBe("old");
    await replaceWholeFile(join(chain, "0"), "forty");
    expect(readFileSync(join(chain, "40"), "utf8")).toBe("forty");
    symlinkSync("0", join(chain, "-1"));
    await expect(replaceWholeFile(join(chain, "-1"), "x")).rejects.toMatchObject({
      code: "ELOOP",
    });
    // A loop is refused as the system refuses it.
    symlinkSync("loop-b.json", join(sub, "loop-a.json"));
    symlinkSync("loop-a.json", join(sub, "loop-b.json"));
    await expect(replaceWholeFile(join(sub, "loop-a.json"), "x")).rejects.toMatchObject({
      code: "ELOOP",
    });
  });
});
