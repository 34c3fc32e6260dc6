// The one AG-UI transcript fold that the console renders and the CLI prints.
export {};
