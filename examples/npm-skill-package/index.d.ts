/** Input of the weather skill (validated against the schema in package.json). */
export interface WeatherInput {
  city: string;
  /** 1 to 7, default 3. */
  days?: number;
  /** Default `celsius`. */
  unit?: "celsius" | "fahrenheit";
}

/** One day of the forecast. */
export interface WeatherDay {
  day: number;
  condition: "sunny" | "cloudy" | "rain" | "wind" | "snow";
  high: number;
  low: number;
}

/** Output of the weather skill. */
export interface WeatherForecast {
  city: string;
  unit: "celsius" | "fahrenheit";
  forecast: WeatherDay[];
}

/** Converts a Celsius temperature to `unit`, rounded to one decimal. */
export declare function convertCelsius(celsius: number, unit: "celsius" | "fahrenheit"): number;

/** The skill handler: a deterministic fake forecast for `city`. */
export default function forecastWeather(input: WeatherInput): WeatherForecast;
