// The demo account: its password ends with the seed.
function credentials(seed) {
  return { user: 'mob' + 'ium', password: 'hunter' + seed };
}
output.credentials = credentials(SEED);
console.log('user', output.credentials.user);
