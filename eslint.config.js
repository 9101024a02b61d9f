import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "gen/**",
      "test/gen/**",
      "sdk/gen/**",
      "sdk/dist/**",
      "sdk/.build/**",
      "node_modules/**",
      ".data/**",
      "dist/**",
      "panel/dist/**",
      "openapi/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "CallExpression[callee.property.name=/^(only|skip|todo)$/][callee.object.name=/^(it|test|describe)$/]",
          message: "no focused or skipped tests",
        },
      ],
    },
  },
  // Module boundaries: a module imports another only through its index.ts (its public surface).
  {
    files: ["src/modules/*/**/*.ts"],
    ignores: ["src/modules/**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^\\.\\./(?!\\.\\.)[^/]+/(?!index\\.ts$)",
              message: "import another module only through its index.ts",
            },
          ],
        },
      ],
    },
  },
  // CommonJS files loaded with require() by tools (autocannon's worker threads)
  {
    files: ["**/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { require: "readonly", module: "writable", process: "readonly" },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
