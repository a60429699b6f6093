// The stock from the detail page's "In stock: N" line, through a JSON round trip.
var parsed = json(JSON.stringify({ line: maestro.copiedText }));
output.stock = parseInt(parsed.line.split(':')[1], 10);
console.log('stock', output.stock, 'on', maestro.platform);
