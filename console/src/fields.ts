export { type Fields, fields } from "@agent-run/client/transcript";
