import { describe, expect, it } from "vitest";
import { ControlLineFilter, MAX_CONTROL_LINE_BYTES } from "../src/control-lines.js";

const RS = "\u001e";

/** Feeds `chunks` through a filter and returns what came out on each side. */
function filter(chunks: string[]): { plain: string; control: [string, string][]; filter: ControlLineFilter } {
  let plain = "";
  const control: [string, string][] = [];
  const splitter = new ControlLineFilter(
    (chunk) => {
      plain += chunk.toString("utf8");
    },
    (kind, payload) => control.push([kind, payload]),
  );
  for (const chunk of chunks) splitter.write(Buffer.from(chunk));
  splitter.end();
  return { plain, control, filter: splitter };
}

describe("ControlLineFilter", () => {
  it("passes output without a record separator through unchanged", () => {
    const { plain, control } = filter(["hello\nwor", "ld\n", '{"level":"info","message":"x"}\n']);

    expect(plain).toBe('hello\nworld\n{"level":"info","message":"x"}\n');
    expect(control).toEqual([]);
  });

  it("takes control lines out, whole or split across chunks, and keeps what surrounds them", () => {
    const {
      plain,
      control,
      filter: splitter,
    } = filter([
      `before\n${RS}skillbox:progress {"progress":1}\nbetween\n${RS}skill`,
      'box:progress {"progress":2,',
      `"total":2}\n${RS}skillbox:done\nafter`,
    ]);

    expect(plain).toBe("before\nbetween\nafter");
    expect(control).toEqual([
      ["progress", '{"progress":1}'],
      ["progress", '{"progress":2,"total":2}'],
      ["done", ""],
    ]);
    expect(splitter.count).toBe(3);
  });

  it("finds a control line that starts after text printed without a newline", () => {
    const { plain, control } = filter([`half a line${RS}skillbox:progress {"progress":3}\n, the rest\n`]);

    expect(plain).toBe("half a line, the rest\n");
    expect(control).toEqual([["progress", '{"progress":3}']]);
  });

  it("leaves a record separator that starts no control line in the output", () => {
    const { plain, control } = filter([`a${RS}b\n${RS}skillbox`, "-not:this\n", `${RS}`]);

    expect(plain).toBe(`a${RS}b\n${RS}skillbox-not:this\n`);
    expect(control).toEqual([]);
  });

  it("drops a control line past the limit, whole, and goes on with the next", () => {
    const long = `${RS}skillbox:progress ${"x".repeat(MAX_CONTROL_LINE_BYTES)}`;
    const {
      plain,
      control,
      filter: splitter,
    } = filter([
      long.slice(0, 1_000),
      long.slice(1_000),
      "x".repeat(50_000),
      `\nkept\n${RS}skillbox:progress {"progress":4}\n`,
    ]);

    expect(plain).toBe("kept\n");
    expect(control).toEqual([["progress", '{"progress":4}']]);
    expect(splitter.dropped).toBe(1);
  });

  it("drops a control line cut short by the end of the stream", () => {
    const { plain, control, filter: splitter } = filter([`done\n${RS}skillbox:progress {"prog`]);

    expect(plain).toBe("done\n");
    expect(control).toEqual([]);
    expect(splitter.dropped).toBe(1);
  });
});
