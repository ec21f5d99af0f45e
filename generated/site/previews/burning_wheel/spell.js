window.rulesdslPreviews("burning_wheel/spell.html", {});
