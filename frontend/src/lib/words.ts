// Counted words: "1 document", "2 documents", never "1 documents".

/** n and the word, singular for exactly one (many: the plural when it is not word + "s"). */
export function count(n: number, word: string, many = word + 's'): string {
  return `${n} ${n === 1 ? word : many}`;
}
