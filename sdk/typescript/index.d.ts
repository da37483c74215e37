// SPDX-License-Identifier: MIT
// Types of @berth/sdk (index.js): resident apps for berth (docs/sdk.md, docs/protocol.md).

/** A JSON Schema object, in berth's manifest subset or full (converted by manifestExports). */
export type JsonSchema = { [keyword: string]: unknown };

/** A Standard Schema (zod >= 3.24, valibot, arktype...); with `jsonSchema` (zod >= 4.2) it also gives JSON Schema. */
export interface StandardSchema<In = unknown, Out = In> {
	readonly "~standard": {
		readonly version: 1;
		readonly vendor: string;
		validate(value: unknown): unknown;
		readonly types?: { readonly input: In; readonly output: Out };
		readonly jsonSchema?: { input(options: { target: string }): JsonSchema; output(options: { target: string }): JsonSchema };
	};
}

/** A schema: plain JSON Schema, or a zod (Standard Schema) schema. */
export type Schema = JsonSchema | StandardSchema<any, any>;

/** What a handler receives for an input schema: zod's output type, else any object. */
export type InputOf<S> = S extends StandardSchema<any, infer O> ? O : Record<string, any>;

/** What a handler gets besides its input. */
export interface CallContext {
	/** The JSON-RPC id berth gave the call. */
	readonly id: number | string | null;
	/** Aborted when berth sends berth/cancel for the call, or closes the channel. */
	readonly signal: AbortSignal;
	/** A berth/log line (RFC 5424 level, default "info"). */
	log(message: string, level?: LogLevel): void;
}

export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

export type Handler<I = Record<string, any>, O = Record<string, unknown>> = (
	input: I,
	ctx: CallContext,
) => O | void | null | Promise<O | void | null>;

/**
 * One export.  `input` and `output` are for manifestExports() (the manifest
 * is what berth checks); a zod `input` also validates the input, and types
 * it, before the handler runs.
 */
export interface ToolSpec<IS extends Schema | undefined = Schema | undefined> {
	description?: string;
	input?: IS;
	output?: Schema;
	handler: Handler<InputOf<IS>>;
}

/** NAME -> spec (or a bare handler); each handler's input is typed from its `input`. */
export type ToolMap<T> = { [K in keyof T]: ToolSpec<T[K] extends Schema ? T[K] : undefined> | Handler };

export interface AppDefinition<T = { [name: string]: Schema | undefined }> {
	name?: string;
	tools?: ToolMap<T> | Array<ToolSpec<any> & { name: string }>;
}

/** An export as berth.yml declares it (what `node index.js --berth-exports` prints). */
export interface ManifestExport {
	name: string;
	description: string;
	input?: JsonSchema;
	output?: JsonSchema;
}

export interface RunOptions {
	/** Exit the process (status 0) when berth closes the channel (default true). */
	exit?: boolean;
}

export class App {
	constructor(definition?: AppDefinition<any>);
	readonly name: string | undefined;
	tool<IS extends Schema | undefined>(name: string, spec: ToolSpec<IS> | Handler): this;
	tool<IS extends Schema | undefined>(name: string, spec: Omit<ToolSpec<IS>, "handler">, handler: Handler<InputOf<IS>>): this;
	readonly exportNames: string[];
	manifestExports(dropped?: string[]): ManifestExport[];
	log(message: string, level?: LogLevel): void;
	run(options?: RunOptions): Promise<void>;
}

export function defineApp<T extends { [name: string]: Schema | undefined }>(definition: AppDefinition<T>): App;

/** Fail the call: -32000 (the export failed) unless `code` says otherwise. */
export class AppError extends Error {
	constructor(message: string, options?: { code?: number; data?: unknown });
	code: number;
	data: unknown;
}

/** Fail the call with -32602; `path` points into the input ("$.items[2]"). */
export class InvalidParams extends AppError {
	constructor(path: string, reason: string);
}

/** Name the system call (and path) of a Node system error for the -32001 answer. */
export function osError<E extends Error>(err: E, syscall: string, path?: string): E;
export function errnoName(errno: number): string | undefined;
export function jsonSchemaOf(schema: Schema | undefined, io?: "input" | "output"): JsonSchema | undefined;
export function manifestSchema(schema: JsonSchema, dropped?: string[], path?: string): JsonSchema;

export const VERSION: string;
export const MAX_MESSAGE: number;
export const LEVELS: LogLevel[];
export const codes: {
	PARSE_ERROR: -32700;
	INVALID_REQUEST: -32600;
	METHOD_NOT_FOUND: -32601;
	INVALID_PARAMS: -32602;
	INTERNAL_ERROR: -32603;
	EXPORT_FAILED: -32000;
	SYSCALL_FAILED: -32001;
	CANCELLED: -32800;
};
