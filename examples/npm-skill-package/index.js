// A Skillbox skill with no dependencies and no imports, so the packed tarball installs offline
// and the loader can import it as plain ESM. The forecast is fake but deterministic: the same
// city, days and unit always give the same answer, which keeps examples and tests reproducible.

const CONDITIONS = ["sunny", "cloudy", "rain", "wind", "snow"];

/** FNV-1a: a small, stable string hash to seed the generator from the city name. */
function hashString(text) {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Mulberry32: a seeded generator, so forecasts do not depend on Math.random. */
function createRandom(seed) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** Converts a Celsius temperature, rounded to one decimal. */
export function convertCelsius(celsius, unit) {
  const value = unit === "fahrenheit" ? (celsius * 9) / 5 + 32 : celsius;
  return Math.round(value * 10) / 10;
}

/**
 * The skill handler: `{ city, days = 3, unit = "celsius" }` → `{ city, unit, forecast }`.
 * Input is validated against the package.json schema before this runs; defaults are applied here
 * because JSON Schema `default` is documentation, not a transformation.
 */
export default function forecastWeather(input) {
  const days = input.days ?? 3;
  const unit = input.unit ?? "celsius";
  // Case and surrounding spaces do not make it a different city.
  const random = createRandom(hashString(input.city.trim().toLowerCase()));
  const baseCelsius = Math.round(random() * 30 - 5);
  const forecast = [];
  for (let day = 1; day <= days; day++) {
    const highCelsius = baseCelsius + Math.round(random() * 8 - 4);
    const lowCelsius = highCelsius - 3 - Math.round(random() * 7);
    const condition = CONDITIONS[Math.floor(random() * CONDITIONS.length)];
    forecast.push({
      day,
      condition: condition === "snow" && lowCelsius > 2 ? "rain" : condition,
      high: convertCelsius(highCelsius, unit),
      low: convertCelsius(lowCelsius, unit),
    });
  }
  return { city: input.city, unit, forecast };
}
