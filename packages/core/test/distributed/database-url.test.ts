import { describe, expect, it } from "vitest";
import { isPostgresUrl, redactedUrl } from "../../src/distributed/database-url.js";

describe("redactedUrl", () => {
  it("hides the password and keeps the user, host, port and database", () => {
    expect(redactedUrl("postgres://app:s3cret@db:5432/skillbox")).toBe("postgres://app:***@db:5432/skillbox");
    expect(redactedUrl("redis://default:s3cret@cache:6379/0")).toBe("redis://default:***@cache:6379/0");
  });

  it("leaves a URL without a password as it is", () => {
    expect(redactedUrl("postgres://app@db/skillbox")).toBe("postgres://app@db/skillbox");
    expect(redactedUrl("redis://cache:6379")).toBe("redis://cache:6379");
  });

  it("hides a password that holds an unescaped slash", () => {
    const shown = redactedUrl("postgres://app:pa/ss@db:5432/x");
    expect(shown).toBe("postgres://app:***@db:5432/x");
    expect(shown).not.toContain("pa/ss");
  });

  it("hides a password that holds an unescaped @ up to the last @", () => {
    const shown = redactedUrl("postgres://app:p@ss@db/x");
    expect(shown).toBe("postgres://app:***@db/x");
    expect(shown).not.toContain("ss@");
  });

  it("hides a password that holds an unescaped question mark", () => {
    expect(redactedUrl("postgres://app:pa?ss@db/x")).toBe("postgres://app:***@db/x");
  });

  it("hides password query parameters", () => {
    expect(redactedUrl("postgres://db/x?user=app&password=s3cret&sslmode=require")).toBe(
      "postgres://db/x?user=app&password=***&sslmode=require",
    );
    expect(redactedUrl("postgres://db/x?sslpassword=k3y")).toBe("postgres://db/x?sslpassword=***");
    expect(redactedUrl("postgres://app@db/x?PASSWORD=s3cret")).toBe("postgres://app@db/x?PASSWORD=***");
  });

  it("never shows the secret of a URL with an @ in its query", () => {
    expect(redactedUrl("postgres://app:s3cret@db/x?application_name=a@b")).not.toContain("s3cret");
  });
});

describe("isPostgresUrl", () => {
  it("tells a PostgreSQL URL from a SQLite path", () => {
    expect(isPostgresUrl("postgresql://db/x")).toBe(true);
    expect(isPostgresUrl("./data/skillbox.db")).toBe(false);
  });
});
