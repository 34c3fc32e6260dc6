// The one AG-UI transcript fold that the console renders and the CLI prints.
export { Transcript, TURN_ENDS } from "./fold.ts";
export { type Fields, fields, inline, clip, text } from "./fields.ts";
export { toolHeadline } from "./headline.ts";
export { UsageTally, type UsageCounts } from "./usage.ts";
export * from "./rows.ts";
