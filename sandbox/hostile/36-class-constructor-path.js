// expect: runtime
// match: TypeError
class A {}
return Reflect.construct(Object.getPrototypeOf(A).constructor, ["return 1"]);
