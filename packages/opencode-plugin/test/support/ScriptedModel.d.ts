/** One chat-completions message as OpenCode sends it. */
export interface ChatMessage {
    readonly role: "system" | "user" | "assistant" | "tool";
    readonly content?: string | null | ReadonlyArray<{
        readonly type: string;
        readonly text?: string;
    }>;
    readonly tool_calls?: ReadonlyArray<{
        readonly id: string;
        readonly function: {
            readonly name: string;
            readonly arguments: string;
        };
    }>;
    readonly tool_call_id?: string;
}
/** A request OpenCode sent. */
export interface Captured {
    readonly body: {
        readonly messages: ReadonlyArray<ChatMessage>;
        readonly tools?: ReadonlyArray<{
            readonly function: {
                readonly name: string;
            };
        }>;
    };
    /** `summary`: OpenCode's summariser (the history serialised in `<conversation>`); `agent`: a call with tools. */
    readonly kind: "agent" | "summary" | "other";
}
/** What the scripted model answers. */
export interface Reply {
    readonly text?: string;
    readonly toolCalls?: ReadonlyArray<{
        readonly name: string;
        readonly args: unknown;
    }>;
    /** Prompt tokens reported; default 1,000. */
    readonly promptTokens?: number;
}
/** The text of a message's content. */
export declare const textOf: (message: ChatMessage) => string;
/** A running scripted model. */
export interface ScriptedModel {
    readonly port: number;
    readonly requests: Array<Captured>;
    /** Called for each request before it is answered (e.g. to kill OpenCode mid-call). */
    onRequest: ((request: Captured) => void) | undefined;
    readonly close: () => Promise<void>;
}
/** Starts the server; `script` answers each request; each request is also appended to `dump` when given. */
export declare const start: (script: (request: Captured) => Reply, dump?: string) => Promise<ScriptedModel>;
