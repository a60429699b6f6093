// Writes the message a flow sends, and counts its words.
const message = 'Hi ' + NAME + ', thanks!';
output.message = message + ' Cheers';
output.words = output.message.split(' ').length;
console.log('message:', output.message);
