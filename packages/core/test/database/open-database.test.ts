import { createSkillHost, openDatabase } from "@skillbox/core";
import { afterEach, describe, expect, it } from "vitest";

const saved = process.env.SKILLBOX_DB;

afterEach(() => {
  if (saved === undefined) delete process.env.SKILLBOX_DB;
  else process.env.SKILLBOX_DB = saved;
});

describe("openDatabase", () => {
  it("refuses a PostgreSQL URL with the fix instead of opening a file named after it, and hides its password", () => {
    let thrown: unknown;
    try {
      createSkillHost({ database: "postgres://app:s3cret@db.internal:5432/skillbox" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: "CONFIG_INVALID" });
    const message = (thrown as Error).message;
    expect(message).toContain("createDistributedHost");
    expect(message).toContain("postgres://app:***@db.internal:5432/skillbox");
    expect(message).not.toContain("s3cret");
  });

  it("names SKILLBOX_DB when the URL comes from the environment", () => {
    process.env.SKILLBOX_DB = "postgresql://db.internal/skillbox";
    expect(() => openDatabase()).toThrow(/^SKILLBOX_DB is a PostgreSQL URL/);
  });
});
