// expect: limit:result_size
return "x".repeat(5000000);
