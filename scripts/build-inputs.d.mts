// Types of build-inputs.mjs, for the TypeScript that imports it (shared/testing/child-service.ts).
export function buildInputsHash(root: string): string;
export function isBuilt(root: string, inputs?: string): boolean;
export function writeBuildStamps(root: string, inputs: string): void;
