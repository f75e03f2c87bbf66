/* keeps a library non-empty before it has portable sources */
typedef int spoor_empty_translation_unit;
