//! Worker side: one execution in a fresh, hardened Boa realm. (stub)
