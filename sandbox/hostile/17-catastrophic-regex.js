// expect: limit:deadline
return /(a+)+$/.test("a".repeat(34) + "!");
