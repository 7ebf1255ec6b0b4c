import { describe, expect, it } from "vitest";
import { RemoteTaskError } from "./errors.ts";
import { nameAndMessage } from "./errorText.ts";

/** A RemoteTaskError whose error object did not come with it: only its texts. */
function fromText(exceptionText: string): RemoteTaskError {
  return new RemoteTaskError({
    key: "k",
    blame: "k",
    exception: undefined,
    exceptionText,
    tracebackText: "",
  });
}

describe("RemoteTaskError without the error object reads the name and message from the text", () => {
  it("a name alone is an error with an empty message, as the worker writes one", () => {
    const e = fromText("Error");
    expect([e.remoteName, e.remoteMessage]).toEqual(["Error", ""]);
    expect(nameAndMessage("ParseFailure")).toEqual({ name: "ParseFailure", message: "" });
    expect(nameAndMessage("mymodule.ParseFailure")).toEqual({
      name: "mymodule.ParseFailure",
      message: "",
    });
  });

  it("`Name: message` splits at the first `: `, the message keeping its lines and colons", () => {
    const e = fromText("ValueError: line 1\nline 2: more");
    expect([e.remoteName, e.remoteMessage]).toEqual(["ValueError", "line 1\nline 2: more"]);
  });

  it("a text that names nothing is an Error's message", () => {
    expect(nameAndMessage("it broke")).toEqual({ name: "Error", message: "it broke" });
    expect(nameAndMessage("")).toEqual({ name: "Error", message: "" });
  });

  it("the error object, when it came, is believed over the text", () => {
    const e = new RemoteTaskError({
      key: "k",
      blame: "k",
      exception: { name: "Odd", message: "" },
      exceptionText: "Odd",
      tracebackText: "",
    });
    expect([e.remoteName, e.remoteMessage]).toEqual(["Odd", ""]);
  });
});
