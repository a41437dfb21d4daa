// Search code: find data sources for a request.
return spec.find('gold kline', 5).map((m) => `${m.source}.${m.method}: ${m.description}`);
