// expect: runtime
// match: TypeError
return (() => {}).constructor("return 1")();
