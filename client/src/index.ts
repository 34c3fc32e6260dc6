// The SDK's entry point: typed calls, the live watch and the transcript fold.
export {};
