// Runs only when its condition holds; says so.
console.log('the condition held');
