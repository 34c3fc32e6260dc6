/**
 * Documented answers made concrete: values built from a JSON Schema (an OpenAPI document's or a
 * frames document's), so a test can serve every shape the API promises without writing any by hand.
 *
 * `full` fills every property (nullable ones with a value), `minimal` only the required ones
 * (nullable ones as null, booleans false, arrays empty). Each place where the schema allows a choice
 * (an enum, a union, a boolean) is a choice point; `variants` gives the full value plus one value
 * per other option at each point, changed one at a time.
 */
type Json = any;

export type Mode = "full" | "minimal";

interface Walk {
  mode: Mode;
  /** Choice point path → option index, overriding the mode's default. */
  picks: Map<string, number>;
  /** Every choice point met, with its number of options. */
  seen: Map<string, number>;
  depth: number;
}

const MAX_DEPTH = 24;
const CANDIDATE_STRINGS = ["r-1", "r1", "1", `sha256:${"0".repeat(64)}`, "text"];

export class Samples {
  private readonly root: Json;
  constructor(root: Json) {
    this.root = root;
  }

  /** Follows local `$ref`s (`#/components/schemas/X` or `#/$defs/X`). */
  resolve(schema: Json): Json {
    let node = schema;
    for (let hops = 0; node && typeof node.$ref === "string"; hops++) {
      if (hops > 32) throw new Error(`a $ref loop at ${schema.$ref}`);
      const pointer = node.$ref as string;
      if (!pointer.startsWith("#/")) throw new Error(`only local $refs are followed: ${pointer}`);
      node = pointer
        .slice(2)
        .split("/")
        .reduce((at: Json, part) => at?.[part.replaceAll("~1", "/").replaceAll("~0", "~")], this.root);
      if (node === undefined) throw new Error(`${pointer} is not in the document`);
    }
    return node;
  }

  value(schema: Json, mode: Mode, picks = new Map<string, number>()): Json {
    return this.walk(schema, "", { mode, picks, seen: new Map(), depth: 0 });
  }

  /** The full value, the minimal one, and the full value with each choice point moved to each other option. */
  variants(schema: Json): { name: string; value: Json }[] {
    const seen = new Map<string, number>();
    const full = this.walk(schema, "", { mode: "full", picks: new Map(), seen, depth: 0 });
    const out = [
      { name: "full", value: full },
      { name: "minimal", value: this.value(schema, "minimal") },
    ];
    for (const [point, options] of seen) {
      for (let index = 1; index < options; index++) {
        const value = this.value(schema, "full", new Map([[point, index]]));
        out.push({ name: `${point || "(root)"}#${index}`, value });
      }
    }
    return dedupe(out);
  }

  private pick(walk: Walk, path: string, options: number, fallback: number): number {
    if (!walk.seen.has(path)) walk.seen.set(path, options);
    return walk.picks.get(path) ?? fallback;
  }

  private walk(input: Json, path: string, walk: Walk): Json {
    const schema = this.resolve(input);
    if (walk.depth > MAX_DEPTH) return null;
    const deeper = { ...walk, depth: walk.depth + 1 };
    if (schema === true || schema === undefined || Object.keys(schema).length === 0) return "any";
    if ("const" in schema) return schema.const;
    if (Array.isArray(schema.enum)) {
      return schema.enum[this.pick(walk, path, schema.enum.length, 0)];
    }
    const union: Json[] | undefined = schema.oneOf ?? schema.anyOf;
    if (Array.isArray(union)) {
      const nullAt = union.findIndex((branch) => this.resolve(branch)?.type === "null");
      const fallback = walk.mode === "minimal" && nullAt >= 0 ? nullAt : nullAt === 0 ? 1 : 0;
      const index = this.pick(walk, path, union.length, fallback);
      const chosen = union[index];
      // Sibling keywords (a shared `properties`, say) apply to every branch. The branch's own
      // choice points get a path of their own, so one pick never lands on two points.
      const { oneOf: _o, anyOf: _a, ...rest } = schema;
      const branch = Object.keys(rest).length > 0 ? { allOf: [rest, chosen] } : chosen;
      return this.walk(branch, `${path}|${index}`, deeper);
    }
    if (Array.isArray(schema.allOf)) return this.walkAll(schema.allOf, path, deeper);
    const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : ["object"];
    let type = types[0] as string;
    if (types.length > 1) {
      const nullAt = types.indexOf("null");
      const fallback = walk.mode === "minimal" && nullAt >= 0 ? nullAt : nullAt === 0 ? 1 : 0;
      type = types[this.pick(walk, path, types.length, fallback)] as string;
    }
    switch (type) {
      case "null":
        return null;
      case "boolean":
        return this.pick(walk, path, 2, walk.mode === "full" ? 0 : 1) === 0;
      case "integer":
      case "number":
        return typeof schema.minimum === "number" ? Math.max(schema.minimum, Math.min(1, schema.maximum ?? 1)) : 1;
      case "string":
        return sampleString(schema);
      case "array": {
        const count = Math.max(schema.minItems ?? 0, walk.mode === "full" ? 1 : 0);
        return Array.from({ length: count }, () => this.walk(schema.items ?? {}, `${path}[]`, deeper));
      }
      default: {
        const out: Record<string, Json> = {};
        const required = new Set<string>(schema.required ?? []);
        for (const [name, property] of Object.entries<Json>(schema.properties ?? {})) {
          if (walk.mode === "minimal" && !required.has(name)) continue;
          out[name] = this.walk(property, `${path}.${name}`, deeper);
        }
        return out;
      }
    }
  }

  /** An allOf: each part's value, objects merged. */
  private walkAll(parts: Json[], path: string, walk: Walk): Json {
    let merged: Json;
    for (const part of parts) {
      const value = this.walk(part, path, walk);
      merged =
        merged && typeof merged === "object" && value && typeof value === "object" ? { ...merged, ...value } : value;
    }
    return merged;
  }
}

function sampleString(schema: Json): string {
  if (schema.format === "date-time") return "2026-12-01T12:00:00.000Z";
  const pattern = typeof schema.pattern === "string" ? new RegExp(schema.pattern) : null;
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Number.POSITIVE_INFINITY;
  const candidates = [...CANDIDATE_STRINGS];
  if (pattern) candidates.unshift(fromPattern(schema.pattern));
  for (const candidate of candidates) {
    const text = candidate.length < min ? candidate.padEnd(min, "x") : candidate;
    if (text.length <= max && (!pattern || pattern.test(text))) return text;
  }
  throw new Error(`no sample string fits ${JSON.stringify(schema)}`);
}

/**
 * A string an anchored pattern of literals, escapes and character classes with quantifiers
 * accepts (the only kind the document uses): each part once, or as often as its quantifier's minimum.
 */
function fromPattern(source: string): string {
  const body = source.replace(/^\^/, "").replace(/\$$/, "");
  let out = "";
  let i = 0;
  while (i < body.length) {
    let unit: string;
    const char = body[i] as string;
    if (char === "[") {
      const end = body.indexOf("]", i + 1);
      const first = body[i + 1] === "\\" ? classEscape(body[i + 2] as string) : (body[i + 1] as string);
      unit = first;
      i = end + 1;
    } else if (char === "\\") {
      unit = classEscape(body[i + 1] as string);
      i += 2;
    } else {
      unit = char;
      i += 1;
    }
    const quantifier = /^(\{(\d+)(,\d*)?\}|[+*?])/.exec(body.slice(i));
    let times = 1;
    if (quantifier) {
      i += quantifier[0].length;
      if (quantifier[0] === "*" || quantifier[0] === "?") times = 0;
      else if (quantifier[2] !== undefined) times = Math.max(1, Number(quantifier[2]));
    }
    out += unit.repeat(times);
  }
  return out;
}

function classEscape(letter: string): string {
  return letter === "d" ? "0" : letter === "w" ? "a" : letter === "s" ? " " : letter;
}

function dedupe<T extends { value: Json }>(items: T[]): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = JSON.stringify(item.value);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
