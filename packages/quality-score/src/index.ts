export const placeholder = 2;
