/**
 * The demo's prompts and resource templates (the Prompts and Templates cards), each argument
 * and variable with the values `completion/complete` suggests as the user types.
 */
import type { StoredPrompt, StoredTemplate } from '../../test/servers/index';

export const DEMO_PROMPTS: StoredPrompt[] = [
  {
    name: 'summarize_note',
    title: 'Summarize a note',
    description: 'A prompt about one note, in the tone you pick',
    arguments: [
      { name: 'note', description: 'The note (its number)', required: true },
      { name: 'tone', description: 'How the summary should sound' },
    ],
    text: 'Summarize note://{note} in a {tone} tone.',
    completions: {
      note: ['1', '2', '3', '4', '5'],
      tone: ['casual', 'cheerful', 'formal', 'friendly', 'neutral', 'terse'],
    },
  },
  {
    name: 'plan_board',
    title: 'Plan the board',
    description: 'A prompt to plan the team board by colour',
    arguments: [{ name: 'color', description: 'The board colour', required: true }],
    text: 'Plan a {color} board for the team.',
    completions: { color: ['blue', 'green', 'orange', 'purple'] },
  },
];

export const DEMO_TEMPLATES: StoredTemplate[] = [
  {
    uriTemplate: 'note://{id}',
    name: 'note',
    title: 'A note by number',
    mimeType: 'text/plain',
    completions: { id: ['1', '2', '3', '4', '5'] },
  },
];
