// expect: runtime
// Module loading is disabled: no filesystem access through import().
return await import("./Cargo.toml");
